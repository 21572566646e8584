#include "worker/custom/ptx_signature.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "worker/custom/contract.h"

namespace kbench::worker {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

// Positions just after each ".entry" keyword (not inside a comment). One pass over each line: a
// search back to the line's start for each keyword was quadratic in a long line of them.
std::vector<size_t> EntryPositions(absl::string_view ptx) {
  std::vector<size_t> out;
  for (size_t line_start = 0; line_start < ptx.size();) {
    size_t line_end = ptx.find('\n', line_start);
    if (line_end == absl::string_view::npos) line_end = ptx.size();
    const absl::string_view line = ptx.substr(line_start, line_end - line_start);
    const size_t code_end = std::min(line.find("//"), line.size());
    for (size_t p = line.find(".entry"); p != absl::string_view::npos && p < code_end; p = line.find(".entry", p + 6)) {
      const size_t pos = line_start + p;
      if (pos + 6 < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[pos + 6]))) out.push_back(pos + 6);
    }
    line_start = line_end + 1;
  }
  return out;
}

std::string NameAt(absl::string_view ptx, size_t pos) {
  while (pos < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[pos]))) ++pos;
  size_t end = pos;
  while (end < ptx.size() && IsIdentChar(ptx[end])) ++end;
  return std::string(ptx.substr(pos, end - pos));
}

// PTX scalars are 8 to 128 bits wide; anything else is not a type (and would overflow a byte count).
int ScalarBytes(absl::string_view type) {
  if (type.size() < 3) return 0;
  int bits = 0;
  if (!absl::SimpleAtoi(type.substr(2), &bits) || bits < 8 || bits > 128) return 0;
  return bits / 8;
}

// More elements than any kernel's parameter space holds (4 KiB, 32 KiB on sm_70+), so that an array's
// size stays a plain int.
constexpr int kMaxParamArrayElements = 1 << 16;

}  // namespace

std::vector<std::string> PtxEntries(absl::string_view ptx) {
  std::vector<std::string> out;
  for (size_t pos : EntryPositions(ptx)) out.push_back(NameAt(ptx, pos));
  return out;
}

absl::StatusOr<std::vector<PtxParam>> PtxEntryParams(absl::string_view ptx, absl::string_view entry) {
  for (size_t pos : EntryPositions(ptx)) {
    if (NameAt(ptx, pos) != entry) continue;
    const size_t open = ptx.find_first_of("({", pos);
    if (open == absl::string_view::npos || ptx[open] == '{') return std::vector<PtxParam>{};
    const size_t close = ptx.find(')', open);
    if (close == absl::string_view::npos)
      return absl::InvalidArgumentError(absl::StrCat("PTX: the parameter list of .entry ", entry, " is not closed"));
    std::vector<PtxParam> params;
    for (absl::string_view decl : absl::StrSplit(ptx.substr(open + 1, close - open - 1), ',')) {
      decl = absl::StripAsciiWhitespace(decl);
      if (decl.empty()) continue;
      // ".param .u64 .ptr .global .align 1 name" or ".param .align 8 .b8 name[16]"
      std::vector<absl::string_view> tokens = absl::StrSplit(decl, absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty());
      if (tokens.empty() || tokens[0] != ".param")
        return absl::InvalidArgumentError(absl::StrCat("PTX: unreadable parameter of .entry ", entry, ": '", decl, "'"));
      PtxParam p;
      absl::string_view type;
      for (size_t i = 1; i < tokens.size(); ++i) {
        absl::string_view t = tokens[i];
        if (t == ".align") {
          ++i;
          continue;
        }
        if (t == ".ptr" || t == ".global" || t == ".const" || t == ".shared" || t == ".local") continue;
        if (t[0] == '.' && type.empty() && ScalarBytes(t) > 0) {
          type = t;
          continue;
        }
        if (t[0] == '[' && !p.name.empty()) p.name += std::string(t);  // "name [16]": the count, spaced off.
        else p.name = std::string(t);
      }
      if (type.empty() || p.name.empty() || p.name[0] == '[')
        return absl::InvalidArgumentError(absl::StrCat("PTX: unreadable parameter of .entry ", entry, ": '", decl, "'"));
      p.size_bytes = ScalarBytes(type);
      p.type = std::string(type);
      if (size_t b = p.name.find('['); b != std::string::npos) {
        int count = 0;
        if (!absl::SimpleAtoi(absl::StripSuffix(absl::string_view(p.name).substr(b + 1), "]"), &count) || count < 1 ||
            count > kMaxParamArrayElements)
          return absl::InvalidArgumentError(absl::StrCat("PTX: unreadable array parameter '", p.name, "'"));
        p.type += p.name.substr(b);
        p.size_bytes *= count;
        p.name.resize(b);
      }
      params.push_back(std::move(p));
    }
    return params;
  }
  const std::vector<std::string> entries = PtxEntries(ptx);
  return absl::NotFoundError(absl::StrCat("no kernel '", entry, "' in the PTX (its entries: ",
                                          entries.empty() ? "none" : absl::StrJoin(entries, ", "), ")"));
}

absl::Status CheckParamSizes(const std::vector<int>& sizes, const v1::LaunchContract& contract,
                             const std::string& entry) {
  const std::string want = absl::StrCat(" (the contract: ", ContractSignature(contract, entry), ")");
  if (static_cast<int>(sizes.size()) != contract.params_size())
    return absl::InvalidArgumentError(absl::StrCat("contract violation: kernel '", entry, "' takes ", sizes.size(),
                                                   " parameters, the contract ", contract.params_size(), want));
  for (int i = 0; i < contract.params_size(); ++i)
    if (sizes[i] != contract.params(i).size_bytes())
      return absl::InvalidArgumentError(absl::StrCat("contract violation: parameter ", i + 1, " (",
                                                     contract.params(i).name(), ") of kernel '", entry, "' is ",
                                                     sizes[i], " bytes, the contract's ", contract.params(i).c_type(),
                                                     " is ", contract.params(i).size_bytes(), want));
  return absl::OkStatus();
}

}  // namespace kbench::worker
