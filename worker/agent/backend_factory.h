// Chooses and builds the worker's backend: CPU or CUDA ("auto": CUDA when a GPU is visible), in a
// runner child process (the default: a fault or hang costs one result) or in this process.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/backend.h"

namespace kbench::worker {

struct BackendOptions {
  std::string kind = "auto";         // auto, cpu or cuda
  std::string isolation = "process";  // process or none
  int device = 0;                    // CUDA device ordinal
  int cpu_device = -1;               // cpu: device i of a multi-device test worker; -1: the host
  bool quick_calibration = false;
  std::string runner_path;           // Empty: kbench-runner beside this executable.
  std::string runner_log;            // Empty: a file in the temporary directory.
};

// "cpu" or "cuda": what "auto" means on this machine.
std::string ResolveBackendKind(const std::string& kind);

// CUDA devices visible to this process; -1 in a build without CUDA.
int VisibleCudaDevices();

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options);

}  // namespace kbench::worker
