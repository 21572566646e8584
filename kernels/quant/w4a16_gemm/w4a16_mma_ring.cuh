// EXPERIMENTAL: the tensor-core GEMV with each warp's weight stream in a private cp.async ring of
// S stages in shared memory (D chunks a stage: the lane's own 16-byte pieces of rows g and g + 8,
// and its rows' D scales and zero points), so that S - 1 stages a warp are in flight without costing
// registers. A lane reads back only the pieces it copied, so no barrier is needed: cp.async.wait_group
// alone orders them. Stored piece-major ([piece][lane]), conflict-free. One warp a 16-row tile over
// all of K; WN warps a block. Needs groups % D == 0 and (D * 2) % 8 == 0 scale pieces, aligned.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_magic.cuh"
#include "quant/w4a16_gemm/w4a16_mma_kernel.cuh"

namespace kbench::kernels::w4a16 {

template <int D>
struct RingLayout {
  static constexpr int kW = 2 * D;                         // 16-byte weight pieces a lane a stage
  static constexpr int kStage = 32 * (kW * 16 + 4 * D * 2);  // + scales and zeros of 2 rows (D bf16 each)
};

template <int D, int S, int WN>
constexpr int RingSmemBytes() {
  return WN * S * RingLayout<D>::kStage;
}

// cp.async of 8 bytes (cached, .ca: 4, 8 or 16 bytes).
__device__ __forceinline__ void CpAsync8(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src) : "memory");
}

template <int NT, int D, int S, int WN>
__global__ void __launch_bounds__(32 * WN)
    GemvMmaRing(const __nv_bfloat16* __restrict__ a, const uint32_t* __restrict__ w,
                const __nv_bfloat16* __restrict__ scales, const __nv_bfloat16* __restrict__ zeros,
                __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  namespace ptx = gemm::ptx;
  using L = RingLayout<D>;
  static_assert(D % 4 == 0, "a lane's scales of a stage are whole 8-byte pieces");
  extern __shared__ __align__(16) uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * (16 * WN) + warp * 16;
  const int64_t words = k / kW4PerWord, groups = k / kW4Group, stages = k / kW4Group / D;
  const uint4* wr[2];
  const __nv_bfloat16 *sr[2], *zr[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = min(n0 + 8 * r + g, n - 1);
    wr[r] = reinterpret_cast<const uint4*>(w + row * words) + t;
    sr[r] = scales + row * groups;
    zr[r] = zeros + row * groups;
  }
  const uint32_t ring = ptx::SmemAddr(smem) + warp * S * L::kStage;
  // Stage j into slot j % S: piece p of lane l at (p * 32 + l) * 16; scales after the weights,
  // 8-byte pieces q (row r, scales then zeros, D / 4 pieces each) at (q * 32 + l) * 8.
  auto issue = [&](int64_t j) {
    if (j < stages) {
      const uint32_t st = ring + static_cast<uint32_t>(j % S) * L::kStage;
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int d = 0; d < D; ++d) ptx::CpAsync16(st + ((r * D + d) * 32 + lane) * 16, wr[r] + (j * D + d) * 4, true);
      const uint32_t ss = st + L::kW * 32 * 16;
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int q = 0; q < D / 4; ++q) {
          CpAsync8(ss + (((r * 2 + 0) * (D / 4) + q) * 32 + lane) * 8, sr[r] + j * D + 4 * q);
          CpAsync8(ss + (((r * 2 + 1) * (D / 4) + q) * 32 + lane) * 8, zr[r] + j * D + 4 * q);
        }
    }
    ptx::CpAsyncCommit();
  };

#pragma unroll
  for (int j = 0; j < S - 1; ++j) issue(j);
  float acc[NT][4] = {};
  for (int64_t j = 0; j < stages; ++j) {
    ptx::CpAsyncWait<S - 2>();
    issue(j + S - 1);  // into the slot read in the previous iteration (by this lane only)
    const uint32_t st = ring + static_cast<uint32_t>(j % S) * L::kStage;
    const uint32_t ss = st + L::kW * 32 * 16;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const int64_t ch = j * D + d;
      const uint4 p0 = ptx::LdsV4(st + ((0 * D + d) * 32 + lane) * 16);
      const uint4 p1 = ptx::LdsV4(st + ((1 * D + d) * 32 + lane) * 16);
      uint16_t sz[4];  // scale row g, scale row g + 8, zero row g, zero row g + 8
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int kind = 0; kind < 2; ++kind) {
          uint16_t v;
          asm volatile("ld.shared.u16 %0, [%1];\n"
                       : "=h"(v)
                       : "r"(ss + (((r * 2 + kind) * (D / 4) + d / 4) * 32 + lane) * 8 + (d % 4) * 2));
          sz[kind * 2 + r] = v;
        }
      const float s0 = __uint_as_float(uint32_t{sz[0]} << 16), s1 = __uint_as_float(uint32_t{sz[1]} << 16);
      const uint32_t z0 = PackBf16Pair(128.0f + __uint_as_float(uint32_t{sz[2]} << 16));
      const uint32_t z1 = PackBf16Pair(128.0f + __uint_as_float(uint32_t{sz[3]} << 16));
      float part[NT][4] = {};
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        uint4 bf[NT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int64_t mr = nt * 8 + g;
          bf[nt] = mr < m ? LoadA(a + mr * k + ch * kW4Group + 32 * t + 8 * u) : make_uint4(0, 0, 0, 0);
        }
        const uint32_t wa = u == 0 ? p0.x : u == 1 ? p0.y : u == 2 ? p0.z : p0.w;
        const uint32_t wb = u == 0 ? p1.x : u == 1 ? p1.y : u == 2 ? p1.z : p1.w;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t frag[4] = {HSub2(MagicPair(wa >> (8 * h)), z0), HSub2(MagicPair(wb >> (8 * h)), z1),
                                    HSub2(MagicPair(wa >> (8 * h + 4)), z0), HSub2(MagicPair(wb >> (8 * h + 4)), z1)};
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
            ptx::MmaBf16(part[nt], frag, h == 0 ? bf[nt].x : bf[nt].z, h == 0 ? bf[nt].y : bf[nt].w);
        }
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        acc[nt][0] = fmaf(s0, part[nt][0], acc[nt][0]);
        acc[nt][1] = fmaf(s0, part[nt][1], acc[nt][1]);
        acc[nt][2] = fmaf(s1, part[nt][2], acc[nt][2]);
        acc[nt][3] = fmaf(s1, part[nt][3], acc[nt][3]);
      }
    }
  }
  ptx::CpAsyncWait<0>();
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t row = n0 + g + (i >= 2 ? 8 : 0), col = nt * 8 + 2 * t + (i % 2);
      if (row < n && col < m) c[col * n + row] = __float2bfloat16_rn(acc[nt][i]);
    }
}

}  // namespace kbench::kernels::w4a16
