// Small op fixtures for the worker's tests, independent of the kernel suite: a "scale" op
// (out = 2 x) with a correct CPU variant and deliberately broken ones, and tiny measurement settings.
#pragma once

#include <memory>

#include "core/op.h"
#include "core/registry.h"
#include "kbench/v1/job.pb.h"
#include "worker/cpu/cpu_info.h"

namespace kbench::worker::testing {

// dims {n}; tensors x (input, [-1, 1]) and out; dtypes f32, bf16; presets small {64}, edge {1, 7};
// cost: bytes 2 n dtype-bytes, flops n. Variants, in order:
//   cpu_good     out = 2 x
//   cpu_wrong    out = 2 x + 1 from index 3 on
//   cpu_lazy     writes only the first half of out
//   cpu_throws   throws std::runtime_error("boom")
//   cpu_small    skips problems with n > 100
//   cpu_f32      out = 2 x, f32 only
//   cuda_good    a CUDA variant (never run here)
kernels::OpDef MakeScaleOp();

// CPU variant "cpu_quits" of the scale op: out = 2 x for its first `working_calls` calls, then
// returns without writing (a kernel that skips its work once warm).
kernels::Variant MakeQuittingVariant(int working_calls);

// A registry holding MakeScaleOp() only.
const kernels::Registry& TestRegistry();

// A host with a small cache, so COLD flushes are cheap, and plenty of memory.
CpuHostInfo TestHost();

// Settings that finish in about a millisecond: 1 ns warm-up, 3..5 samples, 1 ms time limit.
v1::MeasurementSettings TinySettings();

}  // namespace kbench::worker::testing
