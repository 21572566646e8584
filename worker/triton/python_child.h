// Runs the Triton compile step (kbench_triton_compile.py, embedded in the binary) in a child process:
// forked, confined like the NVRTC child (custom/compile_sandbox.h: allow-listed environment, private
// directory, and where the node allows it no network and a read-only file system with a writable
// private tmpfs), then the interpreter is executed with the script as `-c`. Its stdin gets the
// request, its stdout is the reply; past the time limit it is killed.
#pragma once

#include <chrono>
#include <string>

#include "absl/status/statusor.h"

namespace kbench::worker {

struct PythonChildOutput {
  int exit_code = -1;     // -1: killed by a signal (term_signal says which)
  int term_signal = 0;
  std::string out;        // stdout, at most 64 MiB
  std::string err;        // stderr, its last 16 KiB
  std::string sandbox;    // What confined it (CompileSandbox::Describe)
};

// The compile step's text (worker/triton/kbench_triton_compile.py).
const std::string& TritonCompileScript();

// DEADLINE_EXCEEDED past `limit` (the child is killed); INTERNAL when it cannot be started.
absl::StatusOr<PythonChildOutput> RunPythonChild(const std::string& python, const std::string& mode,
                                                 const std::string& input, std::chrono::milliseconds limit);

}  // namespace kbench::worker
