#include "worker/measure/common.h"

#include "absl/strings/str_cat.h"

namespace kbench::worker {

std::string SkipReason(const kernels::Variant& variant, const kernels::Problem& problem, kernels::Backend kind) {
  const bool runnable = kind == kernels::Backend::kCpu ? static_cast<bool>(variant.run_cpu)
                                                       : static_cast<bool>(variant.run_cuda);
  if (variant.backend != kind || !runnable)
    return absl::StrCat("variant '", variant.name, "' is not a ", kind == kernels::Backend::kCpu ? "CPU" : "CUDA",
                        " variant");
  if (!variant.supports(problem.dtype))
    return absl::StrCat("variant '", variant.name, "' does not support dtype ", kernels::DtypeName(problem.dtype));
  if (variant.skip_reason) return variant.skip_reason(problem);
  return "";
}

int64_t TensorBytes(const kernels::OpDef& op, const kernels::Problem& problem) {
  int64_t total = 0;
  for (const auto& t : op.tensors) total += t.numel(problem) * kernels::DtypeBytes(t.dtype(problem));
  return total;
}

v1::ResultStatus FailureStatus(const absl::Status& s) {
  if (absl::IsCancelled(s)) return v1::CANCELLED;
  if (absl::IsDeadlineExceeded(s)) return v1::TIMEOUT;
  return v1::RUNTIME_ERROR;
}

}  // namespace kbench::worker
