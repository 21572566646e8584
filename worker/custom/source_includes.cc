// The include gate of custom CUDA sources; see source_includes.h.
#include "worker/custom/source_includes.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/custom/contract.h"

namespace kbench::worker {
namespace {

// The source as the preprocessor sees it after its first phases, with each character's physical
// line. Every step errs towards what a compiler could see: trigraphs are replaced whether or not
// the language standard has them, a splice may have blanks after its backslash, and universal
// character names of ASCII characters are decoded.
struct Text {
  std::string chars;
  std::vector<int> line;
};

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
// '$' and non-ASCII bytes count as separators: a compiler that takes them into identifiers can only
// see fewer of the words looked for here, never more.
bool IsIdent(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

Text Normalize(absl::string_view src) {
  // Trigraphs ??= (#) and ??/ (\) are the only ones that can make a directive or a splice.
  Text t1;
  int line = 1;
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '?' && i + 2 < src.size() && src[i + 1] == '?' && (src[i + 2] == '=' || src[i + 2] == '/')) {
      c = src[i + 2] == '=' ? '#' : '\\';
      i += 2;
    }
    t1.chars.push_back(c);
    t1.line.push_back(line);
    if (c == '\n') ++line;
  }
  // Line splices: a backslash, optional blanks, a newline.
  Text t2;
  for (size_t i = 0; i < t1.chars.size(); ++i) {
    if (t1.chars[i] == '\\') {
      size_t j = i + 1;
      while (j < t1.chars.size() && IsBlank(t1.chars[j])) ++j;
      if (j < t1.chars.size() && t1.chars[j] == '\n') {
        i = j;
        continue;
      }
    }
    t2.chars.push_back(t1.chars[i]);
    t2.line.push_back(t1.line[i]);
  }
  // Universal character names of ASCII characters (\u0069 is 'i').
  Text out;
  for (size_t i = 0; i < t2.chars.size(); ++i) {
    if (t2.chars[i] == '\\' && i + 1 < t2.chars.size() && (t2.chars[i + 1] == 'u' || t2.chars[i + 1] == 'U')) {
      const size_t digits = t2.chars[i + 1] == 'u' ? 4 : 8;
      uint32_t value = 0;
      size_t k = 0;
      for (; k < digits && i + 2 + k < t2.chars.size(); ++k) {
        const char h = t2.chars[i + 2 + k];
        if (!absl::ascii_isxdigit(static_cast<unsigned char>(h))) break;
        value = value * 16 + static_cast<uint32_t>(absl::ascii_isdigit(static_cast<unsigned char>(h))
                                                       ? h - '0'
                                                       : absl::ascii_tolower(static_cast<unsigned char>(h)) - 'a' + 10);
      }
      if (k == digits && value < 0x80) {
        out.chars.push_back(static_cast<char>(value));
        out.line.push_back(t2.line[i]);
        i += 1 + digits;
        continue;
      }
    }
    out.chars.push_back(t2.chars[i]);
    out.line.push_back(t2.line[i]);
  }
  return out;
}

// Skips blanks and /* */ comments (which may span lines) from `i`; stops at anything else.
size_t SkipSpace(const std::string& s, size_t i) {
  while (i < s.size()) {
    if (IsBlank(s[i])) {
      ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

std::string Identifier(const std::string& s, size_t i) {
  size_t j = i;
  while (j < s.size() && IsIdent(s[j])) ++j;
  return s.substr(i, j - i);
}

absl::string_view RestOfLine(const std::string& s, size_t i) {
  const size_t nl = s.find('\n', i);
  return absl::string_view(s).substr(i, (nl == std::string::npos ? s.size() : nl) - i);
}

bool PragmaNamesFiles(absl::string_view rest) {
  const std::string lower = absl::AsciiStrToLower(rest);
  for (absl::string_view w : {"include", "dependency", "embed", "import"})
    if (absl::StrContains(lower, w)) return true;
  return false;
}

// Why the #include whose operand starts at `i` is refused; empty when it names an allowed header.
std::string CheckOperand(const std::string& s, size_t i) {
  i = SkipSpace(s, i);
  if (i >= s.size() || (s[i] != '"' && s[i] != '<'))
    return "a computed #include (a macro or anything but \"name\" or <name>) is refused";
  const char close = s[i] == '"' ? '"' : '>';
  const size_t end = s.find_first_of(std::string(1, close) + "\n", i + 1);
  if (end == std::string::npos || s[end] != close) return "an #include without its closing quote or bracket";
  const std::string name = s.substr(i + 1, end - i - 1);
  const std::vector<std::string>& allowed = AllowedCustomIncludes();
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
    return absl::StrCat("#include of a file other than the contract's headers is refused (allowed: ",
                        absl::StrJoin(allowed, ", "), ")");
  // Only blanks and comments may follow the header name.
  size_t j = SkipSpace(s, end + 1);
  if (j < s.size() && s[j] != '\n' && s.compare(j, 2, "//") != 0)
    return "an #include with more than a header name on its line is refused";
  return "";
}

}  // namespace

const std::vector<std::string>& AllowedCustomIncludes() {
  static const auto* names = new std::vector<std::string>{kContractHeaderName, "cuda_bf16.h", "cuda_fp16.h"};
  return *names;
}

absl::Status CheckSourceIncludes(absl::string_view source, absl::string_view file_name) {
  const Text t = Normalize(source);
  const std::string& s = t.chars;
  auto refuse = [&](size_t at, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, "(", t.line[at], "): error: ", why,
                                                   "; custom kernels may read no file of the worker"));
  };
  for (size_t i = 0; i < s.size(); ++i) {
    // A directive: # or the digraph %:, then blanks or comments, then its name. Looked for
    // everywhere, not only at the start of a line, so no disagreement about what is a comment or
    // a string can hide one.
    const bool hash = s[i] == '#' || (s[i] == '%' && i + 1 < s.size() && s[i + 1] == ':');
    if (hash) {
      const size_t name_at = SkipSpace(s, i + (s[i] == '#' ? 1 : 2));
      const std::string name = Identifier(s, name_at);
      if (name == "include") {
        if (std::string why = CheckOperand(s, name_at + name.size()); !why.empty()) return refuse(i, why);
      } else if (name == "include_next" || name == "import" || name == "embed") {
        return refuse(i, absl::StrCat("#", name, " is refused"));
      } else if (name == "pragma" && PragmaNamesFiles(RestOfLine(s, name_at + name.size()))) {
        return refuse(i, "a #pragma about includes, imports or dependencies is refused");
      }
      continue;
    }
    if (IsIdent(s[i]) && (i == 0 || !IsIdent(s[i - 1]))) {
      const std::string word = Identifier(s, i);
      if (word == "__has_include" || word == "__has_include_next" || word == "__has_embed")
        return refuse(i, absl::StrCat(word, " is refused (custom kernels may not probe for files)"));
      if (word == "_Pragma" && PragmaNamesFiles(RestOfLine(s, i + word.size())))
        return refuse(i, "a _Pragma about includes, imports or dependencies is refused");
      i += word.size() - 1;
    }
  }
  return absl::OkStatus();
}

}  // namespace kbench::worker
