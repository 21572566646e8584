// The layout fingerprint of the C++ types a plugin hands over (kbench_plugin.h): every size,
// alignment and member offset that code on the other side of the boundary relies on, hashed at
// compile time. Two builds with the same fingerprint agree on how to read each other's registry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/op.h"
#include "core/registry.h"

namespace kbench::kernels::plugin {

namespace layout_detail {

constexpr uint64_t Mix(uint64_t h, uint64_t v) {
  // FNV-1a over the value's 8 bytes.
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 0x100000001b3ull;
  }
  return h;
}

template <class T>
constexpr uint64_t MixType(uint64_t h) {
  return Mix(Mix(h, sizeof(T)), alignof(T));
}

}  // namespace layout_detail

// offsetof on types that are not standard-layout is conditionally supported; GCC and Clang give
// the real offset, which is what we want to compare.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
constexpr uint64_t LayoutFingerprint() {
  using namespace layout_detail;
  uint64_t h = 0xcbf29ce484222325ull;
  // The standard library as this build sees it.
  h = MixType<std::string>(h);
  h = MixType<std::vector<int>>(h);
  h = MixType<std::function<void()>>(h);
#ifdef _GLIBCXX_USE_CXX11_ABI
  h = Mix(h, _GLIBCXX_USE_CXX11_ABI);
#endif
  h = MixType<Problem>(h);
  h = Mix(h, offsetof(Problem, dims)), h = Mix(h, offsetof(Problem, dtype)), h = Mix(h, offsetof(Problem, flags));
  h = MixType<TensorSpec>(h);
  h = Mix(h, offsetof(TensorSpec, dims)), h = Mix(h, offsetof(TensorSpec, is_output));
  h = Mix(h, offsetof(TensorSpec, fixed_dtype)), h = Mix(h, offsetof(TensorSpec, init_hi));
  h = MixType<Tensor>(h);
  h = Mix(h, offsetof(Tensor, numel)), h = Mix(h, offsetof(Tensor, dtype));
  h = MixType<Cost>(h);
  h = MixType<Tolerance>(h);
  h = MixType<LaunchInfo>(h);
  h = Mix(h, offsetof(LaunchInfo, func)), h = Mix(h, offsetof(LaunchInfo, dynamic_shared_bytes));
  h = MixType<Variant>(h);
  h = Mix(h, offsetof(Variant, backend)), h = Mix(h, offsetof(Variant, dtypes));
  h = Mix(h, offsetof(Variant, min_compute_capability)), h = Mix(h, offsetof(Variant, skip_reason));
  h = Mix(h, offsetof(Variant, run_cpu)), h = Mix(h, offsetof(Variant, run_cuda)), h = Mix(h, offsetof(Variant, launches));
  h = Mix(h, offsetof(Variant, triton_source));
  h = MixType<Preset>(h);
  h = MixType<OpDef>(h);
  h = Mix(h, offsetof(OpDef, dims)), h = Mix(h, offsetof(OpDef, tensors)), h = Mix(h, offsetof(OpDef, presets));
  h = Mix(h, offsetof(OpDef, max_dim)), h = Mix(h, offsetof(OpDef, cost)), h = Mix(h, offsetof(OpDef, reference));
  h = Mix(h, offsetof(OpDef, gpu_reference)), h = Mix(h, offsetof(OpDef, gpu_reference_above_flops));
  h = Mix(h, offsetof(OpDef, tolerance)), h = Mix(h, offsetof(OpDef, problem_tolerance));
  h = Mix(h, offsetof(OpDef, validate)), h = Mix(h, offsetof(OpDef, variants));
  h = MixType<DerivedDim>(h);
  h = Mix(h, offsetof(OpDef, derived_dims)), h = Mix(h, offsetof(OpDef, zero_dims));
  h = MixType<Registry>(h);
  // Enumerator values the worker converts with a cast.
  h = Mix(h, static_cast<uint64_t>(Dtype::kFP8E4M3)), h = Mix(h, static_cast<uint64_t>(Backend::kCuda));
  return h;
}
#pragma GCC diagnostic pop

}  // namespace kbench::kernels::plugin
