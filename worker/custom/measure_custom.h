// The runner's side of a custom variant (RunnerRequest.custom): build its image (NVRTC through the
// kernel cache, or the PTX / cubin sent), load it into the device context, and measure it with the
// backend's own MeasureOne, as variant "custom:<name>". Compile errors, contract violations and the
// compile time limit become COMPILE_ERROR results with the compiler's log; a bad launch configuration
// for the problem, RUNTIME_ERROR. CUDA builds only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/op.h"
#include "kbench/v1/custom.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/backend.h"
#include "worker/custom/custom_kernel.h"
#include "worker/custom/kernel_cache.h"

namespace kbench::worker {

// What a runner keeps between custom items: the disk cache and the modules already loaded (the same
// kernel runs for every problem and dtype of a job).
class CustomKernelRunner {
 public:
  CustomKernelRunner(std::string cache_dir, std::string cuda_include_dir)
      : cache_(std::move(cache_dir)), cuda_include_dir_(std::move(cuda_include_dir)) {}

  v1::Result Measure(Backend& backend, const kernels::OpDef& op, const v1::CustomVariant& custom,
                     const kernels::Problem& problem, const v1::MeasurementSettings& settings);

 private:
  KernelCache cache_;
  std::string cuda_include_dir_;
  std::map<std::string, std::unique_ptr<LoadedKernel>> loaded_;  // By image hash and entry.
};

}  // namespace kbench::worker
