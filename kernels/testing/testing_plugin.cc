// The plugin entry point of libkbench_test_kernels.so, the test-only kernel library: the
// fault-injection op (fault_injection.h) with its skip-after-N variants (skip_after_n.h) behind the versioned C ABI (plugin/kbench_plugin.h), so that
// tests load it as any kernel plugin and the production suite never carries it.
#include <utility>

#include "core/registry.h"
#include "plugin/kbench_plugin.h"
#include "plugin/plugin_layout.h"
#include "testing/fault_injection.h"
#include "testing/skip_after_n.h"

namespace {

const kbench::kernels::Registry& TestRegistry() {
  static const kbench::kernels::Registry* registry = [] {
    auto* r = new kbench::kernels::Registry();
    kbench::kernels::OpDef op = kbench::kernels::MakeFaultInjectionOp();
    kbench::kernels::AddSkipAfterNVariants(op);
#ifdef KBENCH_HAVE_CUDA
    kbench::kernels::AddFaultInjectionCudaVariants(op);
    kbench::kernels::AddSkipAfterNCudaVariants(op);
#endif
    r->Add(std::move(op));
    return r;
  }();
  return *registry;
}

}  // namespace

extern "C" const KbenchPluginV1* kbench_plugin_v1(void) {
  static const KbenchPluginV1 entry = {
      .abi_version = KBENCH_PLUGIN_ABI_VERSION,
      .layout_fingerprint = kbench::kernels::plugin::LayoutFingerprint(),
      .build_id = "kbench test kernels",
      .suite_version = kbench::kernels::SuiteVersion(),
      .registry = &TestRegistry(),
  };
  return &entry;
}
