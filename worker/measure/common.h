// What every backend's MeasureOne decides the same way: whether a variant can run a problem at all,
// the bytes a problem's tensors take, and the result status of a failed check or measurement.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/op.h"
#include "kbench/v1/common.pb.h"

namespace kbench::worker {

// Why `variant` cannot run `problem` on a backend of kind `kind` ("" when it can): another
// backend's variant, a dtype it lacks, or its own skip_reason.
std::string SkipReason(const kernels::Variant& variant, const kernels::Problem& problem, kernels::Backend kind);

// Bytes of all the op's tensors on this problem.
int64_t TensorBytes(const kernels::OpDef& op, const kernels::Problem& problem);

// CANCELLED for a raised cancel flag, TIMEOUT past the deadline, RUNTIME_ERROR otherwise.
v1::ResultStatus FailureStatus(const absl::Status& s);

}  // namespace kbench::worker
