// What of a compiler's log goes back to the job: only the messages about the user's own source (and
// the contract's checks, whose text is ours), never lines that quote another file, and at most
// kMaxCompileLogBytes of it. NVRTC quotes the line of every message it reports, so a message about
// another file would carry that file's bytes; an error cascade can run to megabytes.
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace kbench::worker {

inline constexpr size_t kMaxCompileLogBytes = 16 * 1024;

// NVRTC's log reduced to the messages whose location is `file_name` (or the contract's header and
// checks): each "FILE(LINE): kind: text" line with the indented lines that follow it (the quoted
// source line, the caret, "detected during ..."), NVRTC's own summary lines, and a note of how many
// lines were left out. Capped with CapLog.
std::string FilterCompileLog(absl::string_view log, absl::string_view file_name);

// `log` cut at a line boundary to at most `cap` bytes, with a note of how many bytes were left out.
std::string CapLog(absl::string_view log, size_t cap = kMaxCompileLogBytes);

}  // namespace kbench::worker
