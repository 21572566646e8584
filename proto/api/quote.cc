// Quoting and cutting for error messages; see quote.h.
#include "api/quote.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace kbench::api {
namespace {

// The length of the longest prefix of s of at most n bytes that does not end inside a UTF-8 character.
size_t Utf8Prefix(absl::string_view s, size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] continues a character
  return n;
}

std::string Quoted(absl::string_view value, size_t max_bytes, char quote) {
  const bool cut = value.size() > max_bytes;
  std::string out(1, quote);
  out += absl::CHexEscape(value.substr(0, cut ? Utf8Prefix(value, max_bytes) : value.size()));
  if (cut) out += "...";
  out += quote;
  if (cut) absl::StrAppend(&out, " (", value.size(), " bytes)");
  return out;
}

}  // namespace

std::string Quote(absl::string_view value, size_t max_bytes) { return Quoted(value, max_bytes, '\''); }

std::string MapEntryPath(absl::string_view field, absl::string_view key) {
  // The key's size is said in the message that names the path when it matters; here only its prefix.
  const bool cut = key.size() > kMaxQuoteBytes;
  return absl::StrCat(field, "[\"", absl::CHexEscape(key.substr(0, cut ? Utf8Prefix(key, kMaxQuoteBytes) : key.size())),
                      cut ? "..." : "", "\"]");
}

std::string CutText(absl::string_view message, size_t max_bytes) {
  if (message.size() <= max_bytes) return std::string(message);
  const std::string tail = absl::StrCat(" ... (", message.size(), " bytes in all)");
  const size_t keep = max_bytes > tail.size() ? max_bytes - tail.size() : 0;
  return absl::StrCat(message.substr(0, Utf8Prefix(message, keep)), tail);
}

}  // namespace kbench::api
