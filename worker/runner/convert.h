// Conversions between the kernel suite's plain types and the API's messages.
#pragma once

#include "core/op.h"
#include "kbench/v1/common.pb.h"

namespace kbench::worker {

// The two enums share their numbering (core/dtype.h), so these are casts.
inline kernels::Dtype ToKernelDtype(v1::Dtype d) { return static_cast<kernels::Dtype>(static_cast<int>(d)); }
inline v1::Dtype ToProtoDtype(kernels::Dtype d) { return static_cast<v1::Dtype>(static_cast<int>(d)); }
v1::Backend ToProtoBackend(kernels::Backend b);

// Named dims, dtype and flags carry over; the preset name is the API's alone.
kernels::Problem ToKernelProblem(const v1::Problem& p);
v1::Problem ToProtoProblem(const kernels::Problem& p);

}  // namespace kbench::worker
