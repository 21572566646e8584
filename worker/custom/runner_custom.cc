#include "worker/custom/runner_custom.h"

#include "absl/strings/str_cat.h"
#include "api/custom_spec.h"
#include "core/registry.h"
#include "worker/runner/convert.h"
#ifdef KBENCH_HAVE_CUDA
#include "worker/custom/kernel_image.h"
#include "worker/custom/measure_custom.h"
#include "worker/triton/measure_triton.h"
#endif

namespace kbench::worker {

v1::Result MeasureCustomRequest(Backend& backend, const runner::RunnerRequest& req) {
  v1::Result r;
  r.set_op(req.op());
  r.set_variant(api::CustomVariantName(req.custom()));
  *r.mutable_problem() = req.problem();
  *r.mutable_device() = backend.device();
  r.set_status(v1::RUNTIME_ERROR);
  const kernels::OpDef* op = kernels::BuiltinRegistry().Find(req.op());
  if (op == nullptr) {
    r.set_status_message(absl::StrCat("this runner has no op '", req.op(), "'"));
    return r;
  }
  if (backend.kind() != kernels::Backend::kCuda) {
    r.set_status(v1::SKIPPED);
    r.set_status_message("custom kernels need a CUDA device");
    return r;
  }
#ifdef KBENCH_HAVE_CUDA
  // One per runner process: its disk cache and the modules it has loaded.
  static CustomKernelRunner* runner = new CustomKernelRunner(KernelCache::DefaultDir(), DefaultCudaIncludeDir());
  if (req.has_calibration()) backend.set_calibration(req.calibration());
  if (req.custom().kind() == v1::TRITON_SOURCE) {  // worker/triton/: compiled by Triton, not NVRTC
    const std::string file = req.custom().file_name().empty() ? "kernel.py" : req.custom().file_name();
    const int64_t limit_ns = req.custom().compile_timeout_ns() > 0 ? req.custom().compile_timeout_ns() : int64_t{60} * 1000000000;
    CancelFlag never;
    return TritonRunner::Get().Measure(backend, *op, {req.custom().source(), file, r.variant()},
                                       ToKernelProblem(req.problem()), req.settings(), never,
                                       std::chrono::milliseconds(limit_ns / 1000000));
  }
  return runner->Measure(backend, *op, req.custom(), ToKernelProblem(req.problem()), req.settings());
#else
  r.set_status_message("this runner was built without CUDA");
  return r;
#endif
}

}  // namespace kbench::worker
