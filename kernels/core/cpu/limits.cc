// The host-memory limit of the CPU variants (see limits.h).
#include "core/cpu/limits.h"

#include <cstdio>
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

}  // namespace kbench::kernels::cpu
