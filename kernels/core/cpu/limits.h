// The host-memory limit of the CPU variants: problems whose data would not fit comfortably in a host's
// memory are skipped with a reason instead of being attempted.
#pragma once

#include <functional>
#include <string>

#include "core/op.h"

namespace kbench::kernels::cpu {

// The most tensor data (the op's cost-model bytes: every input and output once) a CPU variant runs.
inline constexpr double kMaxDataBytes = 4.0 * (1ull << 30);

using SkipFn = std::function<std::string(const Problem&)>;

// A skip_reason that refuses problems over kMaxDataBytes, then any problem `more` refuses.
SkipFn DataLimitSkip(const OpDef& op, SkipFn more = {});

// The most cost-model FLOPs a one-thread naive CPU rung runs: ~1 GFLOP/s on one core makes 2e10 about
// 20 s, and the canonical shapes past it would take hours.
inline constexpr double kMaxNaiveFlops = 2e10;

// DataLimitSkip, then problems over kMaxNaiveFlops ("too large for one CPU thread").
SkipFn NaiveFlopLimitSkip(const OpDef& op);

}  // namespace kbench::kernels::cpu
