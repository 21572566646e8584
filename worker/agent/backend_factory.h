// Chooses and starts the worker's device: CPU or CUDA ("auto": CUDA when a GPU is visible), always in
// a runner child process (a fault or hang costs one result), the only process that loads kernels.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/isolation/isolated_backend.h"

namespace kbench::worker {

struct BackendOptions {
  std::string kind = "auto";         // auto, cpu or cuda
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

// Starts the device's runner, which describes the device and its own kernel library.
absl::StatusOr<std::unique_ptr<IsolatedBackend>> MakeBackend(const BackendOptions& options);

}  // namespace kbench::worker
