// BuiltinRegistry(): the ops of suite.h, built once.
#include "suite.h"

#include "core/registry.h"

namespace kbench::kernels {

KBENCH_SUITE_OPS(KBENCH_DECLARE_OP)

namespace {

constexpr OpFactory kSuite[] = {KBENCH_SUITE_OPS(KBENCH_LIST_OP)};

}  // namespace

const Registry& BuiltinRegistry() {
  static const Registry* registry = new Registry(RegistryOf(kSuite));
  return *registry;
}

}  // namespace kbench::kernels
