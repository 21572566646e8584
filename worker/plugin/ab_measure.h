// The A/B measurement: a base and a head variant of one problem timed in alternating blocks
// (ABBA BAAB ...) on one backend, each block warmed up, and each side's samples pooled into one
// result. Slow drifts of the device (clocks, temperature, a neighbour's load) then hit both sides
// alike, which two separate measurements cannot promise.
#pragma once

#include <utility>

#include "core/op.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/backend.h"
#include "worker/cancel.h"

namespace kbench::worker {

struct AbSideRef {
  const kernels::OpDef* op = nullptr;  // The side's op (of its own kernel library).
  const kernels::Variant* variant = nullptr;
};

// The settings of one block out of `rounds`: the time and sample budgets split, the warm-up kept
// whole for the first block of each side and a fraction of it after (the other side ran meanwhile).
v1::MeasurementSettings BlockSettings(const v1::MeasurementSettings& settings, int rounds, bool first_block);

// Pools blocks of one side: every OK block's samples, statistics recomputed, roofline recomputed
// from the pooled median. The first block that is not OK (incorrect, failed) decides the result.
v1::Result PoolBlocks(const std::vector<v1::Result>& blocks, const kernels::OpDef& op, const kernels::Problem& problem,
                      const Backend& backend);

// Measures both sides: `rounds` blocks each (settings has its defaults filled). A side that fails
// stops being measured; the other goes on. Returns {base, head}.
std::pair<v1::Result, v1::Result> MeasureAb(Backend& backend, AbSideRef base, AbSideRef head,
                                           const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                           int rounds, const CancelFlag& cancel);

}  // namespace kbench::worker
