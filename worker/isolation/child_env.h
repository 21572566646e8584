// The environment of every child process that runs or compiles job code (the runner, the NVRTC
// compile child, and through the runner a job's plugin): an allow-list of the variables a device,
// a compiler and the kernel cache need, never the worker's secrets. A variable is passed only when
// its name is allowed AND does not look like a credential (TOKEN, SECRET, PASSWORD, KEY, ...), so
// even an allowed prefix (CUDA_*, NVIDIA_*) cannot carry one down.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace kbench::worker {

// True for the names a child may inherit: PATH, LANG, LC_*, TZ, TMPDIR, LD_LIBRARY_PATH, CUDA_*,
// NVIDIA_*, the sanitizers' *SAN_OPTIONS, and the KBENCH_* the runner reads (KBENCH_NVRTC,
// KBENCH_KERNEL_CACHE, KBENCH_PYTHON); false for anything credential-like.
bool IsAllowedChildEnvName(absl::string_view name);

// True for a name that looks like it holds a credential (KBENCH_TOKEN, AWS_SECRET_ACCESS_KEY, ...).
bool LooksLikeSecret(absl::string_view name);

struct ChildEnvOptions {
  std::string home;  // HOME and PWD of the child (its private directory); empty: neither is set.
  // Set after filtering, replacing an inherited value; names must still pass IsAllowedChildEnvName.
  std::vector<std::pair<std::string, std::string>> set;
};

// "NAME=value" entries for a child, from `parent` (a NULL-terminated environ-style array).
std::vector<std::string> BuildChildEnvironment(char* const* parent, const ChildEnvOptions& options);

// An environ-style array over `entries` (which must outlive it), for posix_spawn / execve.
std::vector<char*> EnvironmentPointers(std::vector<std::string>& entries);

// Removes every credential-like variable (LooksLikeSecret) from this process's environment after
// zeroing its value in place, so neither a child nor /proc/<pid>/environ (which shows the strings
// the process started with) carries it. For the worker, once it has read its token.
void ScrubOwnSecrets();

// A fresh private directory (mode 0700) under $TMPDIR or /tmp, named kbench-<what>-XXXXXX; empty
// when none can be made.
std::string MakePrivateDir(absl::string_view what);

// Removes a directory made by MakePrivateDir with everything in it; no error when it is gone.
void RemovePrivateDir(const std::string& dir);

}  // namespace kbench::worker
