// Quoting and cutting for error messages; see quote.h.
#include "api/quote.h"

#include "absl/strings/str_cat.h"

namespace kbench::api {
namespace {

// The length of the longest prefix of s of at most n bytes that does not end inside a UTF-8 character.
size_t Utf8Prefix(absl::string_view s, size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] continues a character
  return n;
}

}  // namespace

std::string Escape(absl::string_view value, size_t max_bytes) {
  const bool cut = value.size() > max_bytes;
  const absl::string_view shown = value.substr(0, cut ? Utf8Prefix(value, max_bytes) : value.size());
  std::string out;
  for (char ch : shown) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c >= 0x20 && c < 0x7f) out += ch;
        else absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    }
  }
  if (cut) out += "...";
  return out;
}

std::string Quote(absl::string_view value, size_t max_bytes) {
  std::string out = absl::StrCat("'", Escape(value, max_bytes), "'");
  if (value.size() > max_bytes) absl::StrAppend(&out, " (", value.size(), " bytes)");
  return out;
}

std::string MapEntryPath(absl::string_view field, absl::string_view key) {
  // The key's size is said in the message that names the path when it matters; here only its prefix.
  return absl::StrCat(field, "[\"", Escape(key), "\"]");
}

std::string CutText(absl::string_view message, size_t max_bytes) {
  if (message.size() <= max_bytes) return std::string(message);
  const std::string tail = absl::StrCat(" ... (", message.size(), " bytes in all)");
  const size_t keep = max_bytes > tail.size() ? max_bytes - tail.size() : 0;
  return absl::StrCat(message.substr(0, Utf8Prefix(message, keep)), tail);
}

}  // namespace kbench::api
