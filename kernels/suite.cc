// BuiltinRegistry(): the ops of suite.h, built once.
#include "suite.h"

#include "core/registry.h"
#include "triton_rungs.h"

namespace kbench::kernels {

KBENCH_SUITE_OPS(KBENCH_DECLARE_OP)

namespace {

constexpr OpFactory kSuite[] = {KBENCH_SUITE_OPS(KBENCH_LIST_OP)};

}  // namespace

const Registry& BuiltinRegistry() {
  static const Registry* registry = [] {
    auto* r = new Registry(RegistryOf(kSuite));
    AddTritonRungs(*r);  // triton_rungs.cc: the *_triton.py rungs beside the CUDA ones
    return r;
  }();
  return *registry;
}

}  // namespace kbench::kernels
