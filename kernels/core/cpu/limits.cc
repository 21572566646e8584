// The CPU variants' limits: host memory, and the FLOPs of a one-thread naive rung (see limits.h).
#include "core/cpu/limits.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace kbench::kernels::cpu {

SkipFn DataLimitSkip(const OpDef& op, SkipFn more) {
  return [cost = op.cost, more = std::move(more)](const Problem& p) -> std::string {
    const double bytes = cost ? cost(p).bytes() : 0;
    if (bytes > kMaxDataBytes) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "problem data is %.2f GiB, over the CPU backend's %.0f GiB limit",
                    bytes / double(1ull << 30), kMaxDataBytes / double(1ull << 30));
      return buf;
    }
    return more ? more(p) : "";
  };
}

SkipFn NaiveFlopLimitSkip(const OpDef& op) {
  return DataLimitSkip(op, [cost = op.cost](const Problem& p) -> std::string {
    const double flops = cost(p).flops;
    if (flops > kMaxNaiveFlops)
      return "too large for one CPU thread (" + std::to_string(static_cast<int64_t>(flops / 1e9)) + " GFLOP; limit " +
             std::to_string(static_cast<int64_t>(kMaxNaiveFlops / 1e9)) + ")";
    return "";
  });
}

}  // namespace kbench::kernels::cpu
