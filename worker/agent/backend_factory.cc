#include "worker/agent/backend_factory.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#ifdef KBENCH_HAVE_CUDA
#include "worker/cuda/device_query.h"
#endif

namespace kbench::worker {
namespace {

std::string RunnerBesideThisExecutable() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "kbench-runner" : (self.parent_path() / "kbench-runner").string();
}

}  // namespace

std::string ResolveBackendKind(const std::string& kind) {
  if (kind != "auto") return kind;
#ifdef KBENCH_HAVE_CUDA
  if (CudaDeviceCount() > 0) return "cuda";
#endif
  return "cpu";
}

int VisibleCudaDevices() {
#ifdef KBENCH_HAVE_CUDA
  return CudaDeviceCount();
#else
  return -1;
#endif
}

absl::StatusOr<std::unique_ptr<IsolatedBackend>> MakeBackend(const BackendOptions& options) {
  const std::string kind = ResolveBackendKind(options.kind);
  if (kind != "cpu" && kind != "cuda")
    return absl::InvalidArgumentError(absl::StrCat("--backend: unknown backend '", kind, "' (known: auto, cpu, cuda)"));
#ifndef KBENCH_HAVE_CUDA
  if (kind == "cuda") return absl::InvalidArgumentError("--backend: this build has no CUDA backend (KBENCH_CUDA=OFF)");
#endif
  RunnerConfig config;
  config.runner_path = options.runner_path.empty() ? RunnerBesideThisExecutable() : options.runner_path;
  config.backend = kind;
  config.device = options.device;
  config.quick_calibration = options.quick_calibration;
  const int ordinal = kind == "cpu" ? std::max(options.cpu_device, 0) : options.device;
  config.log_path = options.runner_log.empty()
                        ? absl::StrCat(std::filesystem::temp_directory_path().string(), "/kbench-runner-", getpid(),
                                       "-", kind, ordinal, ".log")
                        : options.runner_log;
  if (kind == "cpu" && options.cpu_device >= 0)
    config.extra_args.insert(config.extra_args.end(), {"--cpu_device", std::to_string(options.cpu_device)});
  if (access(config.runner_path.c_str(), X_OK) != 0)
    return absl::FailedPreconditionError(absl::StrCat("runner not found at ", config.runner_path));
  return IsolatedBackend::Create(std::move(config), kind == "cuda" ? kernels::Backend::kCuda : kernels::Backend::kCpu);
}

}  // namespace kbench::worker
