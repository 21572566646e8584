// NVRTC, run in a forked child process with a time limit: a compile that runs past it is killed, and
// one that crashes the compiler costs that compile only. The child only compiles (it never touches
// the CUDA driver), so forking the runner, which owns a device context, is safe. The child is
// confined (compile_sandbox.h: allow-listed environment, private directory, and where the node
// allows it no network and a read-only file system), and its log comes back filtered to the
// messages about the request's own file and capped (compile_log.h).
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace kbench::worker {

struct NvrtcRequest {
  std::string source;
  std::string file_name;                                     // For the compiler's messages.
  std::vector<std::pair<std::string, std::string>> headers;  // In-memory headers: name, text.
  std::vector<std::string> options;
  std::string name_expression;  // "&kbench_rmsnorm": its lowered name comes back in `lowered_name`.
};

struct NvrtcOutput {
  bool compiled = false;  // False: the source did not compile; `log` says why.
  std::string log;        // Filtered to `file_name`'s messages, at most compile_log.h's cap.
  std::string sandbox;    // What confined the compile child (CompileSandbox::Describe).
  std::string ptx;        // Empty when NVRTC gives none.
  std::string cubin;      // Empty when compiled for a virtual architecture (compute_XY).
  std::string lowered_name;
};

// DEADLINE_EXCEEDED past the limit; INTERNAL when the child cannot be started or dies (the signal is
// named); UNAVAILABLE when NVRTC is not installed (it is loaded at run time: libnvrtc.so.<CUDA major>,
// or $KBENCH_NVRTC). A source that does not compile is not an error: `compiled` is false.
absl::StatusOr<NvrtcOutput> CompileWithNvrtc(const NvrtcRequest& request, std::chrono::milliseconds limit);

// "nvrtc 13.0".
std::string NvrtcVersionString();
// The real architectures this NVRTC can compile for, e.g. {75, 80, ..., 120}.
std::vector<int> NvrtcSupportedArchitectures();

}  // namespace kbench::worker
