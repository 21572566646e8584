// Filtering and capping compile logs; see compile_log.h.
#include "worker/custom/compile_log.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "worker/custom/contract.h"

namespace kbench::worker {
namespace {

// The file a "FILE(LINE): ..." message line is about; nullopt for any other line.
std::optional<absl::string_view> MessageFile(absl::string_view line) {
  if (line.empty() || absl::ascii_isspace(static_cast<unsigned char>(line[0]))) return std::nullopt;
  const size_t close = line.find("): ");
  if (close == absl::string_view::npos) return std::nullopt;
  const size_t open = line.rfind('(', close);
  int n = 0;
  if (open == absl::string_view::npos || open == 0 || !absl::SimpleAtoi(line.substr(open + 1, close - open - 1), &n))
    return std::nullopt;
  return line.substr(0, open);
}

// NVRTC's own lines outside any message, which quote nothing.
bool IsSummaryLine(absl::string_view line, absl::string_view file_name) {
  if (absl::StartsWith(line, "Remark: ") || line == "Compilation terminated." || absl::StartsWith(line, "nvrtc: "))
    return true;
  // "2 errors detected in the compilation of "mine.cu"."
  return absl::StrContains(line, " detected in the compilation of ") &&
         absl::EndsWith(line, absl::StrCat("\"", file_name, "\".")) &&
         absl::ascii_isdigit(static_cast<unsigned char>(line.empty() ? ' ' : line[0]));
}

}  // namespace

std::string FilterCompileLog(absl::string_view log, absl::string_view file_name) {
  std::string out;
  int64_t left_out = 0;
  bool keeping = false;  // Inside a message that is kept.
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (std::optional<absl::string_view> file = MessageFile(line)) {
      keeping = *file == file_name || *file == kContractHeaderName || *file == "kbench_contract_check";
    } else if (!line.empty() && !absl::ascii_isspace(static_cast<unsigned char>(line[0]))) {
      keeping = IsSummaryLine(line, file_name);  // an unindented line ends the message before it
    }
    // Blank and indented lines belong to the message above them.
    if (keeping) absl::StrAppend(&out, line, "\n");
    else if (!line.empty()) ++left_out;
  }
  while (absl::EndsWith(out, "\n\n")) out.pop_back();
  if (left_out > 0)
    absl::StrAppend(&out, "[kbench: ", left_out, " line", left_out == 1 ? "" : "s",
                    " about other files (or quoting them) left out]\n");
  return CapLog(out);
}

std::string CapLog(absl::string_view log, size_t cap) {
  if (log.size() <= cap) return std::string(log);
  absl::string_view kept = log.substr(0, cap);
  if (const size_t nl = kept.rfind('\n'); nl != absl::string_view::npos) kept = kept.substr(0, nl + 1);
  return absl::StrCat(kept, absl::EndsWith(kept, "\n") ? "" : "\n", "[kbench: log cut at ", cap, " bytes; ",
                      log.size() - kept.size(), " more bytes left out]\n");
}

}  // namespace kbench::worker
