// The correctness check run before timing (and once after): seeded inputs, poisoned outputs, the
// variant against the op's CPU reference in double, over several trials. Works on host tensors;
// a device backend passes a `run` that uploads, launches and copies the outputs back.
#pragma once

#include <functional>
#include <span>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/measure/host_tensors.h"

namespace kbench::worker {

// Runs the variant once on host tensors: inputs filled, outputs poisoned; on return the outputs
// must hold what the variant wrote.
using RunOnHost = std::function<absl::Status(std::span<const kernels::Tensor> tensors)>;
// Returns non-OK (CANCELLED, DEADLINE_EXCEEDED) to stop between trials. May be empty.
using InterruptCheck = std::function<absl::Status()>;

// An op's reference: expected outputs in double from the inputs (core/op.h, OpDef::reference).
using ReferenceFn = decltype(kernels::OpDef::reference);

inline constexpr char kCpuReferenceName[] = "cpu fp64";
// The device fp64 reference a backend uses past OpDef::gpu_reference_above_flops.
inline constexpr char kGpuReferenceName[] = "gpu fp64";

// Trial t uses seed settings.seed() + t; input k of the op draws from stream k, over its
// TensorSpec's [init_lo, init_hi]. Errors, mistakes in the variant aside: those of run or of the
// interrupt check. On return the tensors hold the last trial's inputs and outputs. `reference`, when
// set, replaces op.reference (a device reference for problems too large for the CPU).
absl::StatusOr<v1::Correctness> CheckCorrectness(const kernels::OpDef& op, const kernels::Problem& problem,
                                                 const HostTensors& tensors, const v1::MeasurementSettings& settings,
                                                 const RunOnHost& run, const InterruptCheck& interrupted = {},
                                                 const ReferenceFn& reference = {});

// "12 of 4096 elements mismatch (first at 3), 2 non-finite": for a result's status_message.
std::string DescribeFailure(const v1::Correctness& c);

}  // namespace kbench::worker
