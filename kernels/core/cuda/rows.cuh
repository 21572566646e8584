// Launch plan of the block-per-row kernels (rmsnorm, layernorm, add_rmsnorm): a row of `cols`
// elements is read as `cols / width` packs (width = the 16-byte vector width when the row allows it,
// else 1); a block of up to 256 threads takes one row, about 4 packs a thread, and each thread keeps
// its packs in registers when they fit (at most 32 floats a thread, which keeps registers under ~64
// and many rows resident per SM), so the row is read from memory once. Wider rows fall back to a
// loop that reads the row a second time (mostly from L2).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"

namespace kbench::kernels::cuda {

inline constexpr int kRowBlock = 256;          // most threads a row kernel is launched with
inline constexpr int kRowTargetPacks = 4;      // packs a thread aims for (16-byte loads in flight)
inline constexpr int kRowCacheFloats = 32;     // most floats of a row a thread keeps in registers

struct RowPlan {
  int width = 1;     // elements per access: 1, or 16 / sizeof(T)
  int threads = 32;  // block size, a multiple of 32
  int packs = 0;     // packs per thread kept in registers (a power of two); 0: row re-read in a loop
};

// vec_width: 16 / sizeof(T). vec_ok: the row base pointers are 16-byte aligned (cudaMalloc'd
// tensors are; launches() assumes so).
inline RowPlan PlanRow(int64_t cols, int vec_width, bool vec_ok) {
  RowPlan plan;
  plan.width = vec_ok && cols % vec_width == 0 ? vec_width : 1;
  const int64_t packs = cols / plan.width;
  // About kRowTargetPacks packs a thread: fewer, larger blocks would serialize more rows behind each
  // block's reduction; smaller ones leave too few loads in flight per thread.
  plan.threads = static_cast<int>(
      std::clamp<int64_t>(RoundUp(std::max<int64_t>(CeilDiv(packs, kRowTargetPacks), 1), 32), 32, kRowBlock));
  const int64_t per_thread = CeilDiv(packs, plan.threads);
  int bucket = 1;
  while (bucket < per_thread) bucket *= 2;
  plan.packs = bucket * plan.width <= kRowCacheFloats ? bucket : 0;
  return plan;
}

// Picks the kernel instantiation K<kPacks> from the power-of-two buckets 1..kMaxPacks (at most 128;
// for a RowPlan, kRowCacheFloats / width) or, for any other value, the uncached K<0>. `pick` is a
// generic lambda called with std::integral_constant<int, kPacks>.
template <int kMaxPacks, typename Pick>
auto PickPacks(int packs, Pick&& pick) {
  if constexpr (kMaxPacks >= 1) {
    if (packs == 1) return pick(std::integral_constant<int, 1>{});
  }
  if constexpr (kMaxPacks >= 2) {
    if (packs == 2) return pick(std::integral_constant<int, 2>{});
  }
  if constexpr (kMaxPacks >= 4) {
    if (packs == 4) return pick(std::integral_constant<int, 4>{});
  }
  if constexpr (kMaxPacks >= 8) {
    if (packs == 8) return pick(std::integral_constant<int, 8>{});
  }
  if constexpr (kMaxPacks >= 16) {
    if (packs == 16) return pick(std::integral_constant<int, 16>{});
  }
  if constexpr (kMaxPacks >= 32) {
    if (packs == 32) return pick(std::integral_constant<int, 32>{});
  }
  if constexpr (kMaxPacks >= 64) {
    if (packs == 64) return pick(std::integral_constant<int, 64>{});
  }
  if constexpr (kMaxPacks >= 128) {
    if (packs == 128) return pick(std::integral_constant<int, 128>{});
  }
  return pick(std::integral_constant<int, 0>{});
}

}  // namespace kbench::kernels::cuda
