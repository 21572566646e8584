// The runner's side of a Triton kernel, a rung of the suite (Variant::triton_source) or a job's file
// (CustomVariant of kind TRITON_SOURCE): prepare it without the GPU (triton_prepare.h: capability,
// launch description, compile through the cache), load it (triton_kernel.h), choose among the
// description's configs when it has several (a short timing of each on the problem, once per shape
// class: the problem's dims divisible by 16 or not, and its dtype), then measure the chosen one with
// the backend's own MeasureOne. The result's `custom` block says what was compiled and launched: the
// Triton version, cache hit, compile time, block, grid, the chosen config and the candidates' times.
// CUDA builds only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/op.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/backend.h"
#include "worker/custom/kernel_cache.h"
#include "worker/triton/triton_kernel.h"
#include "worker/triton/triton_prepare.h"

namespace kbench::worker {

class TritonRunner {
 public:
  explicit TritonRunner(std::string cache_dir) : cache_(std::move(cache_dir)) {}

  // The process's one runner (its cache and loaded modules), over KernelCache::DefaultDir().
  static TritonRunner& Get();

  v1::Result Measure(Backend& backend, const kernels::OpDef& op, const TritonKernelSource& kernel,
                     const kernels::Problem& problem, const v1::MeasurementSettings& settings, const CancelFlag& cancel,
                     std::chrono::milliseconds compile_limit = std::chrono::seconds(60));

 private:
  absl::StatusOr<const TritonKernel*> LoadOnce(const TritonKernelImage& image, int contract_params);

  KernelCache cache_;
  std::map<std::string, std::unique_ptr<TritonKernel>> loaded_;  // By cubin hash.
  std::map<std::string, int> chosen_;                            // Autotune: config index by shape class.
};

// True when `variant` is a Triton rung; the CUDA backend then measures it through TritonRunner.
inline bool IsTritonRung(const kernels::Variant& variant) { return !variant.triton_source.empty(); }

}  // namespace kbench::worker
