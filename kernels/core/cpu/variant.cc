// Declaring a CPU variant (see variant.h).
#include "core/cpu/variant.h"

#include <utility>

namespace kbench::kernels::cpu {

Variant MakeCpuVariant(const OpDef& op, std::string name, std::string description, RunFn run, SkipFn more) {
  Variant v;
  v.name = std::move(name);
  v.description = std::move(description);
  v.backend = Backend::kCpu;
  v.dtypes = {Dtype::kF32, Dtype::kBF16};
  v.skip_reason = DataLimitSkip(op, std::move(more));
  v.run_cpu = std::move(run);
  return v;
}

}  // namespace kbench::kernels::cpu
