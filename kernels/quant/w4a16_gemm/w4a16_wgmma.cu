// cuda_v5_wgmma_mixed: w4a16 for M <= 128 on Hopper's wgmma with the dequantized weights as the
// register operand, the structure of Hopper's mixed-input GEMMs (the fastest rung past M = 16; at
// M <= 16 cuda_v4 is faster). cuda_v4's mma.sync kernels put M on
// the n = 8 side and issue N/8 mma.sync a weight fragment; past M = 16 they run latency-bound with 8
// warps an SM (GEMM_README.md, the Nsight Compute profile) and fall below cuBLAS. Here one
// wgmma.m64nNk16 (N = M padded to 8, 16, 32, 48, 56, 64 or 128) takes a warpgroup's 64 weight rows x 16 k from
// registers and the activations from shared memory, asynchronously.
//
//   - The natural W layout serves the register fragment: lane (g, t) at k16 step s needs rows g and
//     g + 8 at k = 16 s + 2t, 2t + 1 and 2t + 8, 2t + 9, which are elements 2t and 2t + 1 of words 2s
//     and 2s + 1 of those rows, nibbles t and t + 4: one shift by 4t and the magic lop3 (w4a16_gemm.h).
//   - TMA brings each 128-k chunk: the activations as two 64-k boxes (128-byte swizzle, the K-major
//     B layout wgmma reads; rows past M zero-filled) and the block's 128 weight rows as one box of 16
//     words a row (64-byte swizzle, so the 8 rows a warp's lanes read at once fall in distinct banks).
//   - A producer warp (one thread) issues the loads 4 stages ahead; two consumer warpgroups each hold
//     64 weight rows, dequantize a chunk's fragments (scale applied in bf16, as v4 does past M = 16)
//     and issue its wgmmas in two halves, so the second half's dequantization runs under the first
//     half's wgmmas. 288 threads and 62-153 registers: one block an SM on the H200 (the resource
//     report: 9 of 64 warps); the clustered form is built to fit two at n <= 64 where it must.
//   - K splits over grid.y where the row blocks leave block slots idle. Where each block's K range is
//     short (4096 x 4096, N = 2112), the splits of a row block are one cluster: each leaves its f32
//     partial tile in its shared memory and each sums a share of the tile over all of them, in split
//     order, through distributed shared memory (4-16% off 48-64 x 4096 x 4096 and 12% off 17 x 2112 x
//     7168 on the H200 against the global merge). The clusters' blocks each own an SM where the device
//     holds them all so (PlanV5: 3 splits of 11 chunks at 4096 x 4096 rather than 4 of 8 with some SMs
//     running two blocks at half speed: 48 x 4096 x 4096 from 16.3-16.6 to 12.7-13.0 us on the H200),
//     and they read their scales and zero points from shared memory, one TMA box of each per block
//     (no global load in the chunk loop). Elsewhere the last block of a row block sums the partials
//     from global memory in split order (MergeSplits), its scale loads 4 chunks ahead in registers.
//     Both add the splits in the same order, from zero: bitwise repeatable.
// Tried and not kept (GEMM_README.md): 256 weight rows a block (a producer warpgroup, setmaxnreg 40 /
// 232: slower at every decode shape), 8 stages, capping the K split at 4 or 2 ways.
// Needs K % 128 == 0 (SKIPPED otherwise), M <= 128, an sm_90 device; A or W off 16-byte alignment (TMA)
// runs cuda_v1's dequantize-then-cuBLAS instead.
#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/cluster_occupancy.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/tensor_map.cuh"
#include "core/cuda/workspace.cuh"
#include "gemm/gemm/gemm_cuda.cuh"
#include "gemm/gemm/gemm_ptx.cuh"
#include "quant/w4a16_gemm/w4a16_cuda.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_magic.cuh"
#include "quant/w4a16_gemm/w4a16_mma_kernel.cuh"
#include "quant/w4a16_gemm/w4a16_mma_smem.cuh"

namespace kbench::kernels::w4a16 {
namespace {

namespace ptx = gemm::ptx;
using bf16 = __nv_bfloat16;

constexpr int kConsumerWarps = 8;                       // two warpgroups, threads 0 .. 255
constexpr int kThreads = 32 * (kConsumerWarps + 1);     // + the producer warp
constexpr int kStages = 4;
constexpr int kScaleSets = 4;  // the global-merge form's scale loads in flight, in chunks
// The K split's partial tile in shared memory (kCluster): column c (a row of A) of the block's 128
// weight rows at c * kPartStride floats; 4 floats of padding so that the accumulators' writes (lanes
// 8 rows by 4 columns two apart) fall in distinct banks.
constexpr int kPartStride = 128 + 4;

// The shapes of one instantiation: NP columns of the wgmma (M padded), R 64-row groups a warpgroup,
// S stages.
template <int NP, int R, int S>
struct WgShape {
  static constexpr int kRows = 2 * 64 * R;          // weight rows a block
  static constexpr int kActBytes = 2 * NP * 128;    // two 64-k boxes of NP rows x 128 bytes
  static constexpr int kWBytes = kRows * 64;        // kRows x 16 words
  static constexpr int kStage = kActBytes + kWBytes;
  static constexpr int kSmem = S * kStage + 2 * S * 8 + 1024;  // + barriers, + alignment slack
  // The clustered kernel's scales and zero points: a kRows x kW4ScaleBoxGroups box of each (bf16),
  // between the stages and the barriers.
  static constexpr int kScaleBox = kRows * kW4ScaleBoxGroups * 2;
  static constexpr int kSmemCluster = kSmem + 2 * kScaleBox;
  static_assert(kActBytes % 1024 == 0 && kStage % 1024 == 0, "boxes start on 1024-byte boundaries");
  static_assert(kRows <= 256, "a TMA box has at most 256 rows");
  static_assert(kSmem <= 227 * 1024, "the stages must fit an SM's shared memory");
  static_assert(NP * kPartStride * 4 <= S * kStage, "the partial tile fits in the stages it reuses");
};

#if KB_GEMM_SM90A
__device__ __forceinline__ void WgmmaRegA(float (&d)[4], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, %8, p, 1, 1, 0;\n"  // A in registers, B K-major
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

__device__ __forceinline__ void WgmmaRegA(float (&d)[8], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
      "{%8, %9, %10, %11}, %12, p, 1, 1, 0;\n"  // A in registers, B K-major
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

__device__ __forceinline__ void WgmmaRegA(float (&d)[16], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "{%16, %17, %18, %19}, %20, p, 1, 1, 0;\n"  // A in registers, B K-major
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

__device__ __forceinline__ void WgmmaRegA(float (&d)[24], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, "
      "{%24, %25, %26, %27}, %28, p, 1, 1, 0;\n"  // A in registers, B K-major
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

__device__ __forceinline__ void WgmmaRegA(float (&d)[28], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n56k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27}, "
      "{%28, %29, %30, %31}, %32, p, 1, 1, 0;\n"  // A in registers, B K-major
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

__device__ __forceinline__ void WgmmaRegA(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n"  // A in registers, B K-major
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}


__device__ __forceinline__ void WgmmaRegA(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n"  // A in registers, B K-major
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

template <int N>
__device__ __forceinline__ void PinAcc(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Every thread of the cluster: shared-memory writes before it are visible to the cluster after it.
// (The release compiles to a GPU-scope memory barrier: it waits for the thread's global stores.)
__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Every thread of the cluster has arrived; orders no memory access.
__device__ __forceinline__ void ClusterSyncRelaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}
__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Four floats at `addr` in the shared memory of cluster block `rank`.
__device__ __forceinline__ float4 LdClusterV4(uint32_t addr, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}
#endif


// The clustered form is built to fit two blocks an SM up to NP = 64 (ptxas holds it to 96 registers),
// for devices that can hold a problem's clusters only that way (PlanV5).
template <int NP, int R, int S, bool kCluster>
__global__ void __launch_bounds__(kThreads, kCluster && NP <= 64 ? 2 : 1)
    W4a16Wgmma(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_w,
               const __grid_constant__ CUtensorMap tma_s, const __grid_constant__ CUtensorMap tma_z,
               const bf16* __restrict__ scales, const bf16* __restrict__ zeros, bf16* __restrict__ c, int m, int n,
               int k, int per_split, float* __restrict__ part, unsigned* __restrict__ counters) {
#if KB_GEMM_SM90A
  using Sh = WgShape<NP, R, S>;
  constexpr int kAcc = NP / 2;  // accumulator floats a thread per 64-row group
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t base = (ptx::SmemAddr(smem_raw) + 1023u) & ~1023u;
  const uint32_t scale_box = base + S * Sh::kStage;  // kCluster: scales, then zero points
  const uint32_t full_bar = scale_box + (kCluster ? 2 * Sh::kScaleBox : 0), empty_bar = full_bar + 8 * S;
  const int n0 = blockIdx.x * Sh::kRows;
  const int chunks = k / kW4Group, groups = chunks;
  const int c0 = blockIdx.y * per_split, count = min(per_split, chunks - c0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      ptx::MbarInit(full_bar + 8 * s, 1);
      ptx::MbarInit(empty_bar + 8 * s, kConsumerWarps);
    }
    ptx::FenceBarrierInit();
  }
  __syncthreads();

  if (warp >= kConsumerWarps) {  // the producer warp
    if (warp == kConsumerWarps && lane == 0) {
      for (int j = 0, stage = 0, phase = 0; j < count; ++j) {
        ptx::MbarWait(empty_bar + 8 * stage, phase ^ 1);
        const uint32_t full = full_bar + 8 * stage, st = base + stage * Sh::kStage;
        ptx::MbarArriveExpectTx(full, Sh::kStage + (kCluster && j == 0 ? 2 * Sh::kScaleBox : 0));
        if (kCluster && j == 0) {
          // The block's scales and zero points, with its first chunk: a box starts 16-byte aligned in
          // global memory (group c0 rounded down to 8), so it spans groups c0 & ~7 .. + 23.
          ptx::TmaLoad2d(scale_box, &tma_s, c0 & ~7, n0, full);
          ptx::TmaLoad2d(scale_box + Sh::kScaleBox, &tma_z, c0 & ~7, n0, full);
        }
        const int kc = (c0 + j) * kW4Group;
        ptx::TmaLoad2d(st, &tma_a, kc, 0, full);
        ptx::TmaLoad2d(st + NP * 128, &tma_a, kc + 64, 0, full);
        ptx::TmaLoad2d(st + Sh::kActBytes, &tma_w, kc / kW4PerWord, n0, full);
        if (++stage == S) stage = 0, phase ^= 1;
      }
    }
    if constexpr (kCluster) {
      __syncwarp();  // lane 0 back from producing: the barrier is .aligned
      if (gridDim.y > 1) ClusterSync(), ClusterSync();  // the consumers' two (every thread arrives)
    }
    return;
  }

  const int wg = warp / 4, w = warp % 4, g = lane / 4, t = lane % 4;
  // This thread's weight rows in the block: lr[r] and lr[r] + 8 for each 64-row group r.
  int lr[R];
#pragma unroll
  for (int r = 0; r < R; ++r) lr[r] = (wg * R + r) * 64 + 16 * w + g;
  float acc[R][kAcc];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[r][i] = 0.0f;

  // The raw bf16 scale and zero point of chunk j for this thread's rows (the global-merge form loads
  // them kScaleSets chunks ahead), widened only where used.
  struct Raw {
    unsigned short s[R][2], z[R][2];
  };
  struct Group {
    uint32_t s[R][2], z[R][2];  // bf16 pairs: scale, 128 + zero
  };
  const auto load_raw = [&](int j, Raw& rv) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = min(n0 + lr[r] + 8 * h, n - 1);
        const int64_t at = row * groups + c0 + j;
        rv.s[r][h] = __ldg(reinterpret_cast<const unsigned short*>(scales) + at);
        rv.z[r][h] = __ldg(reinterpret_cast<const unsigned short*>(zeros) + at);
      }
  };
  const auto widen = [&](const Raw& rv, Group& gv) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        gv.s[r][h] = uint32_t{rv.s[r][h]} | (uint32_t{rv.s[r][h]} << 16);
        gv.z[r][h] = PackBf16Pair(128.0f + __uint_as_float(uint32_t{rv.z[r][h]} << 16));
      }
  };

  // The four bf16x2 fragment registers of row group r at k16 step s from the stage's weight box:
  // words 2s and 2s + 1 of rows lr and lr + 8, read through the 64-byte swizzle (16-byte unit u of
  // row q sits at unit u ^ ((q >> 1) & 3)).
  const int shift = 4 * t;
  const auto fragment = [&](uint32_t wbox, int r, int s, const Group& gv, uint32_t (&a)[4]) {
    uint32_t v[2][2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int q = lr[r] + 8 * h;
      const uint32_t addr = wbox + q * 64 + (((s >> 1) ^ ((q >> 1) & 3)) << 4) + (s & 1) * 8;
      asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(v[h][0]), "=r"(v[h][1]) : "r"(addr));
    }
    // a0: row g, k 2t, 2t+1 (word 2s); a1: row g+8 (word 2s); a2: row g, k 2t+8, 2t+9 (word 2s+1); a3: row g+8.
    a[0] = HMul2(HSub2(MagicPair(v[0][0] >> shift), gv.z[r][0]), gv.s[r][0]);
    a[1] = HMul2(HSub2(MagicPair(v[1][0] >> shift), gv.z[r][1]), gv.s[r][1]);
    a[2] = HMul2(HSub2(MagicPair(v[0][1] >> shift), gv.z[r][0]), gv.s[r][0]);
    a[3] = HMul2(HSub2(MagicPair(v[1][1] >> shift), gv.z[r][1]), gv.s[r][1]);
  };

  int stage = 0, phase = 0;
  // One chunk: its wgmmas issued in two halves and waited for, its stage handed back.
  const auto run_chunk = [&](int j, auto&& group_of) {
    ptx::MbarWait(full_bar + 8 * stage, phase);
    Group cur;
    group_of(cur);
    const uint32_t st = base + stage * Sh::kStage, wbox = st + Sh::kActBytes;
    // Two halves of 4 k16 steps (one 64-k activation box each): the second half's fragments are
    // built while the first half's wgmmas run.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      uint32_t a[4][R][4];
#pragma unroll
      for (int s4 = 0; s4 < 4; ++s4)
#pragma unroll
        for (int r = 0; r < R; ++r) fragment(wbox, r, 4 * half + s4, cur, a[s4][r]);
#pragma unroll
      for (int r = 0; r < R; ++r) PinAcc(acc[r]);
      ptx::WgmmaFence();
#pragma unroll
      for (int s4 = 0; s4 < 4; ++s4) {
        const uint64_t desc = ptx::DescKMajorSw128(st + half * NP * 128 + s4 * 32);
#pragma unroll
        for (int r = 0; r < R; ++r) WgmmaRegA(acc[r], a[s4][r], desc);
      }
      ptx::WgmmaCommit();
    }
    ptx::WgmmaWait<0>();
#pragma unroll
    for (int r = 0; r < R; ++r) PinAcc(acc[r]);
    __syncwarp();
    if (lane == 0) ptx::MbarArrive(empty_bar + 8 * stage);
    if (++stage == S) stage = 0, phase ^= 1;
  };
  if constexpr (kCluster) {
    // Chunk j's scale and zero point of row q sit at [q][(c0 & 7) + j] of the boxes that came with
    // the first chunk (count <= kW4ClusterMaxUnitsOneSm, so inside the box's 24 groups): no global
    // load in the chunk loop.
    for (int j = 0; j < count; ++j)
      run_chunk(j, [&](Group& gv) {
        Raw rv;
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint32_t at = scale_box + (lr[r] + 8 * h) * (kW4ScaleBoxGroups * 2) + ((c0 & 7) + j) * 2;
            asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(rv.s[r][h]) : "r"(at));
            asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(rv.z[r][h]) : "r"(at + Sh::kScaleBox));
          }
        widen(rv, gv);
      });
  } else {
    // kScaleSets raw sets named in turn (the loop unrolled by as many): chunk j's set is widened, then
    // refilled for chunk j + kScaleSets. The loads are clamped, not predicated: a predicated load keeps
    // the old value where it does not run, and to merge the two ptxas copies the register, a copy that
    // waits for the load (as the rotation r0 = r1, r1 = r2 this replaced did, a chunk after the issue).
    Raw rs[kScaleSets];
#pragma unroll
    for (int p = 0; p < kScaleSets; ++p) load_raw(min(p, count - 1), rs[p]);
    for (int j0 = 0; j0 < count; j0 += kScaleSets) {
#pragma unroll
      for (int p = 0; p < kScaleSets; ++p) {
        const int j = j0 + p;
        if (j < count) {
          Group cur;
          widen(rs[p], cur);
          load_raw(min(j + kScaleSets, count - 1), rs[p]);
          run_chunk(j, [&](Group& gv) { gv = cur; });
        }
      }
    }
  }

  // acc[r][4 q + i]: weight row lr[r] (+ 8 for i >= 2), column (row of A) 8 q + 2t + (i % 2).
  const auto for_each_out = [&](auto&& f) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int i = 0; i < kAcc; ++i) {
        const int row = n0 + lr[r] + ((i % 4) >= 2 ? 8 : 0), col = 8 * (i / 4) + 2 * t + (i % 2);
        if (row < n && col < m) f(row, col, acc[r][i]);
      }
  };
  if (gridDim.y == 1) {
    for_each_out([&](int row, int col, float v) { c[static_cast<int64_t>(col) * n + row] = __float2bfloat16_rn(v); });
    return;
  }
  if constexpr (kCluster) {
    // The splits of a row block are one cluster (grid.y): each block leaves its f32 partial tile in
    // its own shared memory (the stages, once every consumer warp is done with them), and block r
    // sums every block's tile, in rank order, for its share of the tile's float4 units, reading the
    // others' shared memory directly: no global partials, fence, counter or last-block merge.
    ptx::NamedBarrier(1, 32 * kConsumerWarps);  // no consumer warp still reads a stage
    float* tile = reinterpret_cast<float*>(smem_raw + (base - ptx::SmemAddr(smem_raw)));
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int i = 0; i < kAcc; ++i) {
        const int row = lr[r] + ((i % 4) >= 2 ? 8 : 0), col = 8 * (i / 4) + 2 * t + (i % 2);
        tile[col * kPartStride + row] = acc[r][i];
      }
    ClusterSync();
    const uint32_t rank = ClusterRank(), splits = gridDim.y;
    const int units = min(m, NP) * (Sh::kRows / 4);  // float4s of the columns A has
    for (int u = static_cast<int>(rank) * 32 * kConsumerWarps + threadIdx.x; u < units;
         u += static_cast<int>(splits) * 32 * kConsumerWarps) {
      const int col = u / (Sh::kRows / 4), row = 4 * (u % (Sh::kRows / 4));
      const uint32_t at = base + static_cast<uint32_t>(col * kPartStride + row) * 4;
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
      for (uint32_t sp = 0; sp < splits; ++sp) {
        const float4 v = LdClusterV4(at, sp);
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      bf16* out = c + static_cast<int64_t>(col) * n + n0 + row;
      const float f[4] = {sum.x, sum.y, sum.z, sum.w};
      if (n0 + row + 3 < n && (reinterpret_cast<uintptr_t>(out) & 7) == 0) {
        const __nv_bfloat162 lo = __floats2bfloat162_rn(f[0], f[1]), hi = __floats2bfloat162_rn(f[2], f[3]);
        uint2 packed;
        packed.x = *reinterpret_cast<const uint32_t*>(&lo), packed.y = *reinterpret_cast<const uint32_t*>(&hi);
        *reinterpret_cast<uint2*>(out) = packed;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (n0 + row + e < n) out[e] = __float2bfloat16_rn(f[e]);
      }
    }
    // No block leaves while another still reads its tile. Relaxed: this thread's reads of the others'
    // tiles are done (their values are stored), and a release would wait for the output stores.
    ClusterSyncRelaxed();
    return;
  }
  float* mine = part + static_cast<int64_t>(blockIdx.y) * m * n;
  for_each_out([&](int row, int col, float v) { mine[static_cast<int64_t>(col) * n + row] = v; });
  __shared__ bool last;
  __threadfence();
  ptx::NamedBarrier(1, 32 * kConsumerWarps);  // the producer warp has left
  if (threadIdx.x == 0) {
    last = atomicAdd(&counters[blockIdx.x], 1u) == gridDim.y - 1;
    if (last) counters[blockIdx.x] = 0;
  }
  ptx::NamedBarrier(1, 32 * kConsumerWarps);
  if (!last) return;
  __threadfence();
  MergeSplits(part, c, m, n, n0, min(Sh::kRows, n - n0), gridDim.y, 32 * kConsumerWarps);
#endif  // KB_GEMM_SM90A
}

// ---- host ----------------------------------------------------------------------------------------
using V5Kernel = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, const bf16*, const bf16*, bf16*, int,
                          int, int, int, float*, unsigned*);

// The grid of an n x k problem: row blocks x K splits, whether the splits of a row block run as one
// cluster and sum their partials through distributed shared memory, and the dynamic shared memory a
// block asks for. 0 or a cudaError_t as int.
//   - Clustered where the scales can come by TMA (W4ScalesByTma; `scales_aligned`: both tensors
//     16-byte aligned) and a split's shape allows it. First choice: each block alone on its SM (a
//     shared-memory request that leaves no room for a second), the widest split that W4ClusterSplit
//     finds whose clusters all fit at once that way: two blocks sharing an SM both run at half speed,
//     and a cluster waits for its slowest block (48 x 4096 x 4096 on the H200: the clusters of 4 that
//     fit two an SM left 8 SMs with two blocks and finished 5 us after the median block; clusters of 3
//     at one an SM, 0.78x the time; GEMM_README.md). Else, as before, W4KSplit's split as clusters of
//     blocks that may share an SM (W4ClusterShape).
//   - Otherwise the partials go through global memory and the last block of a row block sums them.
struct V5Plan {
  int64_t row_blocks = 0, slots = 1, splits = 1, per = 0;
  bool cluster = false;
  size_t smem = 0;
};
template <int NP, int R, int S>
int PlanV5(int64_t n, int64_t k, bool scales_aligned, V5Plan* plan) {
  using Sh = WgShape<NP, R, S>;
  const auto* plain = reinterpret_cast<const void*>(&W4a16Wgmma<NP, R, S, false>);
  const auto* clustered = reinterpret_cast<const void*>(&W4a16Wgmma<NP, R, S, true>);
  const size_t one_sm = std::max<size_t>(cuda::OneBlockAnSmSmem(), Sh::kSmemCluster);
  KB_CUDA_TRY(cuda::AllowDynamicSmem(plain, Sh::kSmem));
  KB_CUDA_TRY(cuda::AllowDynamicSmem(clustered, one_sm));
  const int64_t units = k / kW4Group;
  plan->row_blocks = cuda::CeilDiv(n, Sh::kRows);
  plan->slots = std::max<int64_t>(1, cuda::ResidentBlocks(plain, kThreads, Sh::kSmem));
  const W4KSplitShape shape = W4KSplit(plan->row_blocks, units, plan->slots);
  plan->splits = shape.splits, plan->per = shape.per, plan->cluster = false, plan->smem = Sh::kSmem;
  if (!scales_aligned || !W4ScalesByTma(units)) return 0;
  const W4KSplitShape alone = W4ClusterSplit(units, shape.splits, [&](int64_t splits) {
    return cuda::ResidentClusters(clustered, kThreads, one_sm, static_cast<int>(splits)) >= plan->row_blocks;
  });
  if (alone.splits > 1) {
    plan->splits = alone.splits, plan->per = alone.per, plan->cluster = true, plan->smem = one_sm;
  } else if (W4ClusterShape(shape) && cuda::ResidentClusters(clustered, kThreads, Sh::kSmemCluster,
                                                             static_cast<int>(shape.splits)) >= plan->row_blocks) {
    plan->cluster = true, plan->smem = Sh::kSmemCluster;
  }
  return 0;
}

template <int NP, int R, int S>
int LaunchWgmma(const W4Args& g, cudaStream_t s) {
  using Sh = WgShape<NP, R, S>;
  CUtensorMap map_a, map_w, map_s{}, map_z{};
  if (const int e = cuda::EncodeRowMajor2d(&map_a, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, g.a, g.m, g.k, NP, 64,
                                           CU_TENSOR_MAP_SWIZZLE_128B);
      e != 0)
    return e;
  if (const int e = cuda::EncodeRowMajor2d(&map_w, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, g.w, g.n, g.k / kW4PerWord,
                                           Sh::kRows, 16, CU_TENSOR_MAP_SWIZZLE_64B);
      e != 0)
    return e;
  V5Plan plan;
  if (const int e = PlanV5<NP, R, S>(g.n, g.k, cuda::Aligned16(g.scales) && cuda::Aligned16(g.zeros), &plan); e != 0)
    return e;
  const dim3 grid(static_cast<unsigned>(plan.row_blocks), static_cast<unsigned>(plan.splits));
  // Non-const: cudaLaunchKernelEx takes its arguments' addresses as void*.
  int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k), per = static_cast<int>(plan.per);
  const bf16* scales = static_cast<const bf16*>(g.scales);
  const bf16* zeros = static_cast<const bf16*>(g.zeros);
  bf16* c = static_cast<bf16*>(g.c);
  if (plan.cluster) {
    // The scales and zero points ([N][groups] bf16), kRows x kW4ScaleBoxGroups boxes.
    const int64_t groups = g.k / kW4Group;
    for (auto [map, data] : {std::pair{&map_s, g.scales}, std::pair{&map_z, g.zeros}})
      if (const int e = cuda::EncodeRowMajor2d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, data, g.n, groups, Sh::kRows,
                                               kW4ScaleBoxGroups, CU_TENSOR_MAP_SWIZZLE_NONE);
          e != 0)
        return e;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 1, attr.val.clusterDim.y = static_cast<unsigned>(plan.splits), attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid, cfg.blockDim = dim3(kThreads), cfg.dynamicSmemBytes = plan.smem, cfg.stream = s;
    cfg.attrs = &attr, cfg.numAttrs = 1;
    float* no_part = nullptr;
    unsigned* no_counters = nullptr;
    const V5Kernel kernel = &W4a16Wgmma<NP, R, S, true>;
    KB_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, map_a, map_w, map_s, map_z, scales, zeros, c, m, n, k, per, no_part,
                                   no_counters));
    return 0;
  }
  KSplit split;
  if (const int e = PlanKSplit(plan.row_blocks, g.k / kW4Group, plan.slots, g.m, g.n, s, &split); e != 0) return e;
  W4a16Wgmma<NP, R, S, false><<<grid, kThreads, Sh::kSmem, s>>>(map_a, map_w, map_s, map_z, scales, zeros, c, m, n,
                                                                k, static_cast<int>(split.per), split.part,
                                                                split.counters);
  KB_LAUNCH_CHECK();
  return 0;
}

// f(std::integral_constant<int, NP>) with NP, the wgmma's n: M padded to 8, 16, 32, 48, 56, 64 or 128.
// (48 and 56: less tensor work and activation traffic than 64 for M = 33..56: 40 x 4096 x 4096 and
// 48 x 14336 x 4096 5-10% faster on the H200, 56 x 4096 x 4096 6%.)
template <typename F>
auto WithWidth(int64_t m, F&& f) {
  if (m <= 8) return f(std::integral_constant<int, 8>{});
  if (m <= 16) return f(std::integral_constant<int, 16>{});
  if (m <= 32) return f(std::integral_constant<int, 32>{});
  if (m <= 48) return f(std::integral_constant<int, 48>{});
  if (m <= 56) return f(std::integral_constant<int, 56>{});
  if (m <= 64) return f(std::integral_constant<int, 64>{});
  return f(std::integral_constant<int, 128>{});  // 40 KB a stage: one block an SM
}

int RunV5(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (g.k % kW4Group != 0 || g.m > 128) return static_cast<int>(cudaErrorInvalidValue);  // SKIPPED by SkipV5
  if (!cuda::Aligned16(g.a) || !cuda::Aligned16(g.w)) return LaunchW4DequantThenGemm(g, s);
  return WithWidth(g.m, [&](auto np) { return LaunchWgmma<np.value, 1, kStages>(g, s); });
}

std::string SkipV5(const Problem& p) {
  if (p.dim("M") > 128) return "M = " + std::to_string(p.dim("M")) + " > 128: M is the wgmma's n side, at most 128 here";
  if (p.dim("K") % kW4Group != 0)
    return "K = " + std::to_string(p.dim("K")) + " is not a multiple of the group (128): TMA brings whole groups";
  if (std::string why = gemm::Int32DimsSkip(p); !why.empty()) return why;
  std::string why;
  const int cc = gemm::CurrentComputeCapability(&why);
  if (cc == 0) return why;
  if (cc != 90) return "needs an sm_90 (Hopper) device: wgmma and TMA are built only as sm_90a machine code";
  return "";
}

std::vector<LaunchInfo> LaunchesV5(const Problem& p) {
  return WithWidth(p.dim("M"), [&](auto np) {
    constexpr int kNp = np.value;
    V5Plan plan;
    const bool planned = PlanV5<kNp, 1, kStages>(p.dim("N"), p.dim("K"), true, &plan) == 0;
    const std::string how = !planned || plan.splits == 1 ? ""
                            : plan.cluster               ? ",split" + std::to_string(plan.splits) + ",cluster"
                                                         : ",split" + std::to_string(plan.splits) + ",global";
    const void* kernel = plan.cluster ? reinterpret_cast<const void*>(&W4a16Wgmma<kNp, 1, kStages, true>)
                                      : reinterpret_cast<const void*>(&W4a16Wgmma<kNp, 1, kStages, false>);
    return std::vector<LaunchInfo>{{"W4a16Wgmma<n" + std::to_string(kNp) + how + ">", kernel, kThreads,
                                    static_cast<int64_t>(planned ? plan.smem : WgShape<kNp, 1, kStages>::kSmem)}};
  });
}

}  // namespace

void AddW4a16WgmmaVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v5_wgmma_mixed",
      .description = "M <= 128 on Hopper (past M = 16 the fastest rung): wgmma with the magic-dequantized weights as the register operand, "
                     "activations and packed weights by TMA, a producer warp and two consumer warpgroups.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 90,
      .skip_reason = SkipV5,
      .run_cuda = RunV5,
      .launches = LaunchesV5,
  });
}

}  // namespace kbench::kernels::w4a16
