// EXPERIMENTAL (sm_90a): the tensor-core GEMV fed by bulk copies instead of register loads. A
// persistent block (one a SM) owns a contiguous range of 16-row tiles; its producer warp streams
// each tile as CH-chunk stages (16 rows x CH*64 bytes of weights, and the stage's scales and zero
// points: one bulk copy each a row) into C consumer rings of R stages, signalled by mbarriers;
// consumer c takes stages c, c + C, ... of every tile (a K split) and the C partial sums of a tile
// are added through shared memory. The bytes in flight are the rings' (C * R stages), not registers.
// Needs groups % CH == 0 (the scale rows of a stage are whole 16-byte copies), 16-byte aligned
// tensors; M <= 8 * NT.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_magic.cuh"
#include "quant/w4a16_gemm/w4a16_mma_kernel.cuh"

namespace kbench::kernels::w4a16 {

template <int CH>
struct BulkLayout {
  static constexpr int kRowBytes = CH * 64;          // weights of a row in a stage
  static constexpr int kPitch = kRowBytes + 64;      // rows 64 bytes apart mod 128: conflict-free LDS.128
  static constexpr int kScaleBytes = CH * 2;         // one row's scales (or zeros) in a stage
  static constexpr int kWeights = 16 * kPitch;
  static constexpr int kStage = kWeights + 2 * 16 * kScaleBytes;
  static constexpr uint32_t kTx = 16 * (kRowBytes + 2 * kScaleBytes);  // bytes a stage receives
  static_assert(kScaleBytes % 16 == 0, "bulk copies move multiples of 16 bytes");
};

template <int NT, int C, int R, int CH>
constexpr int BulkSmemBytes() {
  return C * R * BulkLayout<CH>::kStage + 2 * C * R * 8 + 2 * C * 32 * NT * 4 * 4;
}

#if KB_GEMM_SM90A
__device__ __forceinline__ void BulkCopyG2S(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
#endif

template <int NT, int C, int R, int CH>
__global__ void __launch_bounds__(32 * (C + 1), 1)
    GemvMmaBulk(const __nv_bfloat16* __restrict__ a, const uint32_t* __restrict__ w,
                const __nv_bfloat16* __restrict__ scales, const __nv_bfloat16* __restrict__ zeros,
                __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k) {
#if KB_GEMM_SM90A
  using L = BulkLayout<CH>;
  namespace ptx = gemm::ptx;
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + C * R * L::kStage);
  uint64_t* empty = full + C * R;
  float* red = reinterpret_cast<float*>(empty + C * R);  // [2][C][32][4 NT]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t words = k / kW4PerWord, groups = k / kW4Group, chunks = k / kW4Group;
  const int64_t tiles = (n + 15) / 16, stages = chunks / CH;
  const int64_t t0 = tiles * blockIdx.x / gridDim.x, t1 = tiles * (blockIdx.x + 1) / gridDim.x;
  if (threadIdx.x == 0) {
    for (int i = 0; i < C * R; ++i) {
      ptx::MbarInit(ptx::SmemAddr(full + i), 1);
      ptx::MbarInit(ptx::SmemAddr(empty + i), 1);
    }
    ptx::FenceBarrierInit();
  }
  __syncthreads();
  if (warp == C) {  // producer
    for (int64_t tile = t0; tile < t1; ++tile)
      for (int64_t j = 0; j < stages; ++j) {
        // Item i of consumer cc: its stages of the earlier tiles, then of this one.
        const int cc = static_cast<int>(j % C);
        const int64_t i = (tile - t0) * ((stages - cc + C - 1) / C) + j / C;
        const int slot = cc * R + static_cast<int>(i % R);
        ptx::MbarWait(ptx::SmemAddr(empty + slot), static_cast<uint32_t>(((i / R) & 1) ^ 1));
        const uint32_t bar = ptx::SmemAddr(full + slot);
        if (lane == 0) ptx::MbarArriveExpectTx(bar, L::kTx);
        __syncwarp();
        if (lane < 16) {
          const int64_t row = min(tile * 16 + lane, n - 1);
          const uint32_t st = ptx::SmemAddr(smem + slot * L::kStage);
          BulkCopyG2S(st + lane * L::kPitch, w + row * words + j * CH * 16, L::kRowBytes, bar);
          BulkCopyG2S(st + L::kWeights + lane * L::kScaleBytes, scales + row * groups + j * CH, L::kScaleBytes, bar);
          BulkCopyG2S(st + L::kWeights + 16 * L::kScaleBytes + lane * L::kScaleBytes, zeros + row * groups + j * CH,
                      L::kScaleBytes, bar);
        }
      }
    return;
  }
  // Consumer `warp`: stages warp, warp + C, ... of every tile of the block.
  const int g = lane / 4, t = lane % 4;
  int64_t i = 0;
  int parity = 0;
  for (int64_t tile = t0; tile < t1; ++tile, parity ^= 1) {
    float acc[NT][4] = {};
    for (int64_t j = warp; j < stages; j += C, ++i) {
      const int slot = warp * R + static_cast<int>(i % R);
      ptx::MbarWait(ptx::SmemAddr(full + slot), static_cast<uint32_t>((i / R) & 1));
      const uint8_t* st = smem + slot * L::kStage;
      const auto* sc = reinterpret_cast<const uint16_t*>(st + L::kWeights);
      const auto* ze = sc + 16 * CH;
#pragma unroll 2
      for (int d = 0; d < CH; ++d) {
        const int64_t ch = j * CH + d;
        const uint4 p0 = *reinterpret_cast<const uint4*>(st + g * L::kPitch + d * 64 + t * 16);
        const uint4 p1 = *reinterpret_cast<const uint4*>(st + (g + 8) * L::kPitch + d * 64 + t * 16);
        const float s0 = __uint_as_float(uint32_t{sc[g * CH + d]} << 16);
        const float s1 = __uint_as_float(uint32_t{sc[(g + 8) * CH + d]} << 16);
        const uint32_t z0 = PackBf16Pair(128.0f + __uint_as_float(uint32_t{ze[g * CH + d]} << 16));
        const uint32_t z1 = PackBf16Pair(128.0f + __uint_as_float(uint32_t{ze[(g + 8) * CH + d]} << 16));
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
                                      HSub2(MagicPair(wa >> (8 * h + 4)), z0),
                                      HSub2(MagicPair(wb >> (8 * h + 4)), z1)};
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
              gemm::ptx::MmaBf16(part[nt], frag, h == 0 ? bf[nt].x : bf[nt].z, h == 0 ? bf[nt].y : bf[nt].w);
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
      __syncwarp();
      if (lane == 0) ptx::MbarArrive(ptx::SmemAddr(empty + slot));
    }
    // The tile's C partial sums, added by consumer 0 in warp order; red is double-buffered by tile,
    // so one barrier a tile suffices.
    float* r = red + parity * C * 32 * NT * 4;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int q = 0; q < 4; ++q) r[(warp * 32 + lane) * NT * 4 + nt * 4 + q] = acc[nt][q];
    ptx::NamedBarrier(1, 32 * C);
    if (warp == 0) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          float v = 0;
          for (int cw = 0; cw < C; ++cw) v += r[(cw * 32 + lane) * NT * 4 + nt * 4 + q];
          const int64_t row = tile * 16 + g + (q >= 2 ? 8 : 0), col = nt * 8 + 2 * t + (q % 2);
          if (row < n && col < m) c[col * n + row] = __float2bfloat16_rn(v);
        }
    }
  }
#endif
}

}  // namespace kbench::kernels::w4a16
