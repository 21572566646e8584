// The plugin entry point of libkbench_kernels.so: its built-in registry behind the versioned C ABI
// (kbench_plugin.h). The library is linked with -Bsymbolic, so that two builds loaded in one runner
// (a pull request's base and head) each call their own code.
#include "core/registry.h"
#include "plugin/kbench_plugin.h"
#include "plugin/plugin_layout.h"

namespace {

constexpr char kBuildId[] =
#if defined(__clang__)
    "clang " __clang_version__
#elif defined(__GNUC__)
    "gcc " __VERSION__
#else
    "unknown compiler"
#endif
#ifdef KBENCH_HAVE_CUDA
    ", cuda"
#else
    ", cpu only"
#endif
    ;  // No date: two builds of one source are the same bytes, and hash the same.

}  // namespace

extern "C" const KbenchPluginV1* kbench_plugin_v1(void) {
  static const KbenchPluginV1 entry = {
      .abi_version = KBENCH_PLUGIN_ABI_VERSION,
      .layout_fingerprint = kbench::kernels::plugin::LayoutFingerprint(),
      .build_id = kBuildId,
      .suite_version = kbench::kernels::SuiteVersion(),
      .registry = &kbench::kernels::BuiltinRegistry(),
  };
  return &entry;
}
