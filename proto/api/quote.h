// Quoting user values in error messages, and cutting messages to a size: an error names the field
// and shows at most a short, escaped prefix of a bad value, so that a 10 MB field never comes back
// as a 10 MB error (or as a gRPC metadata-size failure that hides the reason).
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "api/limits.h"

namespace kbench::api {

// The value made printable ASCII: at most max_bytes of it (cut at a UTF-8 character boundary, then
// "..."), with backslash, quotes, control and non-ASCII bytes escaped (\n, \', \x1b, \xff).
std::string Escape(absl::string_view value, size_t max_bytes = kMaxQuoteBytes);

// 'abc' for a short value; 'abcdefgh...' (10485760 bytes) for a long one. At most max_bytes of the
// value, C-escaped (non-printable and non-ASCII bytes as \xNN), so the result is printable ASCII.
std::string Quote(absl::string_view value, size_t max_bytes = kMaxQuoteBytes);

// A map entry's field path: field["key"], the key quoted as Quote does (with double quotes).
std::string MapEntryPath(absl::string_view field, absl::string_view key);

// The message itself when it has at most max_bytes; else its first bytes (cut at a UTF-8 character
// boundary) and " ... (N bytes in all)". For status messages and stored free text.
std::string CutText(absl::string_view message, size_t max_bytes);

}  // namespace kbench::api
