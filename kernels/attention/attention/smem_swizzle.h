// The XOR swizzle of the mma.sync attention rung's shared-memory tiles (attention_flash_mma.cu), for
// host and device: the unit tests check on the CPU the identities the kernel's addressing rests on.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KBENCH_SWIZZLE_FN __host__ __device__ __forceinline__
#else
#define KBENCH_SWIZZLE_FN inline
#endif

namespace kbench::kernels::attention {

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of D-half rows: chunk ^ (row % 8), so
// the 8 rows one ldmatrix reads (D halves apart, the same banks unswizzled) fall on all 32 banks.
template <int D>
KBENCH_SWIZZLE_FN uint32_t Swz(int row, int chunk) {
  return static_cast<uint32_t>(row * (D * 2) + ((chunk ^ (row & 7)) << 4));
}

// The swizzled byte offset within its row of chunk 2 ks + c for a lane whose rows are all r mod 8,
// given x16 = (c ^ r) << 4: 2 ks + c is 2 ks ^ c, so the offset is 32 ks ^ x16, which is
// (32 (ks % 4) ^ x16) + 128 (ks / 4) since x16 < 128. With ks unrolled, one XOR and one add a
// k step for all of a warp's ldmatrix rows of it, instead of re-deriving each row's swizzle.
KBENCH_SWIZZLE_FN uint32_t ChunkAt(uint32_t x16, int ks) {
  return ((32u * static_cast<uint32_t>(ks & 3)) ^ x16) + 128u * static_cast<uint32_t>(ks >> 2);
}

}  // namespace kbench::kernels::attention
