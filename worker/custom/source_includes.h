// The gate before NVRTC: a custom CUDA source may #include only the contract's headers. NVRTC
// reads any file an #include names and quotes it in its log, so `#include "/proc/self/environ"`
// would hand the worker's environment to whoever submitted the source. The check is on the text,
// before the compiler runs, and errs on the side of refusing: line splices, trigraphs, digraphs,
// universal character names and comments between `#` and the directive are seen through; a
// computed #include (a macro), #include_next, #import, #embed, __has_include and pragmas that
// name includes or dependencies are refused; an #include of another file is refused even inside a
// comment or a string. The refusal names the line, never the file's contents.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kbench::worker {

// The headers a custom source may #include (as "name" or <name>): the contract's own header, and
// the CUDA headers its bf16 type comes from (resolved only in the CUDA include directory).
const std::vector<std::string>& AllowedCustomIncludes();

// INVALID_ARGUMENT "FILE(LINE): error: ..." for the first include (or probe) that is not allowed.
absl::Status CheckSourceIncludes(absl::string_view source, absl::string_view file_name);

}  // namespace kbench::worker
