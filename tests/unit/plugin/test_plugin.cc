// A small kernel plugin for the plugin tests, built several times with different definitions:
//   KBENCH_TEST_PLUGIN_FLAVOR  1 (the "base") or 2 (the "head"): what Flavor() returns, and whether
//                              plugin_probe's cpu_copy only copies (base) or burns time first (head)
//                              and cpu_fragile copies (base) or crashes (head);
//   KBENCH_TEST_PLUGIN_ABI     an ABI version to claim instead of the real one (refusal test);
//   KBENCH_TEST_PLUGIN_LAYOUT_SALT  added to the layout fingerprint (refusal test).
// It defines kbench::kernels::BuiltinRegistry() and a Flavor() of its own, symbols that the test
// binary's libkbench_kernels.so (or the other flavor) also has, and is linked without -Bsymbolic:
// only the loader's RTLD_DEEPBIND keeps its calls inside it. It carries the fault-injection op
// (kernels/testing/).
#include <csignal>
#include <cstring>

#include "core/registry.h"
#include "plugin/kbench_plugin.h"
#include "plugin/plugin_layout.h"
#include "testing/fault_injection.h"

#ifndef KBENCH_TEST_PLUGIN_FLAVOR
#define KBENCH_TEST_PLUGIN_FLAVOR 1
#endif

namespace kbench::kernels {

// Same name in every flavor: a call that crossed into another copy would return the wrong number.
__attribute__((visibility("default"), noinline)) int Flavor() { return KBENCH_TEST_PLUGIN_FLAVOR; }

namespace {

// Copies x to out, after `extra` dependent multiply-adds per element that nothing can optimise away
// (a copy done several times would mostly hit the cache: the extra work must not).
void Copy(std::span<const Tensor> t, int extra) {
  const auto* x = static_cast<const float*>(t[0].data);
  float acc = 0;
  for (int64_t i = 0; i < t[0].numel; ++i)
    for (int k = 0; k < extra; ++k) {
      acc = acc * 0.5f + x[i];
      asm volatile("" : "+x"(acc));
    }
  std::memcpy(t[1].data, t[0].data, t[0].numel * sizeof(float));
}

Variant Cpu(std::string name, std::function<void(const Problem&, std::span<const Tensor>)> run) {
  Variant v;
  v.name = std::move(name);
  v.description = "test plugin variant";
  v.backend = Backend::kCpu;
  v.dtypes = {Dtype::kF32};
  v.run_cpu = std::move(run);
  return v;
}

OpDef MakeProbeOp() {
  OpDef op;
  op.name = "plugin_probe";
  op.description = "Test-only: out = x, in one test plugin build or another";
  op.dims = {"N"};
  op.dtypes = {Dtype::kF32};
  op.tensors = {{.name = "x", .dims = {"N"}}, {.name = "out", .dims = {"N"}, .is_output = true}};
  op.presets = {{"small", {MakeProblem(op, {1 << 18})}}};
  op.cost = [](const Problem& p) { return Cost{.bytes_read = 4.0 * p.dim("N"), .bytes_written = 4.0 * p.dim("N")}; };
  op.reference = [](const Problem& p, std::span<const Tensor> in, std::vector<std::vector<double>>& out) {
    for (int64_t i = 0; i < p.dim("N"); ++i) out[0][i] = static_cast<const float*>(in[0].data)[i];
  };
  op.tolerance = [](Dtype) { return Tolerance{0, 0}; };
  op.variants.push_back(Cpu("cpu_copy", [](const Problem&, std::span<const Tensor> t) {
    Copy(t, KBENCH_TEST_PLUGIN_FLAVOR == 1 ? 0 : 8);
  }));
  op.variants.push_back(Cpu("cpu_same", [](const Problem&, std::span<const Tensor> t) { Copy(t, 0); }));
  op.variants.push_back(Cpu("cpu_fragile", [](const Problem&, std::span<const Tensor> t) {
    if (KBENCH_TEST_PLUGIN_FLAVOR != 1) std::raise(SIGSEGV);
    Copy(t, 0);
  }));
  // Writes Flavor() into every element: which copy of Flavor() ran (wrong against the reference on
  // purpose; the loader test calls it directly).
  op.variants.push_back(Cpu("cpu_flavor", [](const Problem&, std::span<const Tensor> t) {
    for (int64_t i = 0; i < t[1].numel; ++i) static_cast<float*>(t[1].data)[i] = static_cast<float>(Flavor());
  }));
  return op;
}

}  // namespace

const Registry& BuiltinRegistry() {
  static const Registry* registry = [] {
    auto* r = new Registry();
    r->Add(MakeProbeOp());
    r->Add(MakeFaultInjectionOp());
    return r;
  }();
  return *registry;
}

}  // namespace kbench::kernels

extern "C" const KbenchPluginV1* kbench_plugin_v1(void) {
  static const KbenchPluginV1 entry = {
#ifdef KBENCH_TEST_PLUGIN_ABI
      .abi_version = KBENCH_TEST_PLUGIN_ABI,
#else
      .abi_version = KBENCH_PLUGIN_ABI_VERSION,
#endif
#ifdef KBENCH_TEST_PLUGIN_LAYOUT_SALT
      .layout_fingerprint = kbench::kernels::plugin::LayoutFingerprint() + KBENCH_TEST_PLUGIN_LAYOUT_SALT,
#else
      .layout_fingerprint = kbench::kernels::plugin::LayoutFingerprint(),
#endif
      .build_id = "test plugin",
      .suite_version = "test-" KBENCH_TEST_PLUGIN_NAME,
      .registry = &kbench::kernels::BuiltinRegistry(),
  };
  return &entry;
}
