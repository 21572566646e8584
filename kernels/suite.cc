// BuiltinRegistry(): the ops of suite.h, built once. The fault-injection op (testing/), with its
// skip-after-N variants (testing/skip_after_n.h), joins them only when its environment switch is set.
#include "suite.h"

#include <utility>

#include "core/registry.h"
#include "testing/fault_injection.h"
#include "testing/skip_after_n.h"

namespace kbench::kernels {

KBENCH_SUITE_OPS(KBENCH_DECLARE_OP)

namespace {

constexpr OpFactory kSuite[] = {KBENCH_SUITE_OPS(KBENCH_LIST_OP)};

Registry Build() {
  Registry r = RegistryOf(kSuite);
  if (FaultInjectionEnabled()) {
    OpDef op = MakeFaultInjectionOp();
    AddSkipAfterNVariants(op);
#ifdef KBENCH_HAVE_CUDA
    AddFaultInjectionCudaVariants(op);
    AddSkipAfterNCudaVariants(op);
#endif
    r.Add(std::move(op));
  }
  return r;
}

}  // namespace

const Registry& BuiltinRegistry() {
  static const Registry* registry = new Registry(Build());
  return *registry;
}

}  // namespace kbench::kernels
