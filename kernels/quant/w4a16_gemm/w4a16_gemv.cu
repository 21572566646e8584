// The decode rungs of w4a16_gemm (M <= 8): GEMV-like kernels where each warp owns one weight row n
// and its lanes walk K, keeping one fp32 accumulator per row of A; a warp reduction ends each row.
// They stream the packed weights once (0.5 bytes a weight) and read A through L1.
//   cuda_v2_gemv_dequant  4-byte loads (one word, 8 weights, a lane), dequantized with shifts and
//                         masks: per weight a shift, an AND, an int-to-float conversion and a
//                         subtraction before its FMA. Scalar loads of A.
//   cuda_v3_gemv_magic    16-byte loads (4 words, 32 weights, one group) and the magic-number trick:
//                         lop3 puts two codes into the mantissas of the bf16 pair 0x4300 (= 128.0,
//                         whose ulp is 1), giving 128 + q for both at once; one bf16x2 subtraction of
//                         128 + zero leaves q - zero exactly (whole numbers, |.| <= 15); bf16 -> f32 is
//                         a shift or a mask. 16-byte loads of A. The scale multiplies each 32-weight
//                         partial sum once instead of every weight.
// Both stay exact until the fp32 accumulation: (q - zero) has 5 significant bits, A's bf16 8, so every
// product is an exact f32. Problems with M > 8 are skipped (the tensor-core rungs and cuBLAS are
// for those); v3 takes v2's path for tensors whose rows are not 16-byte aligned (K % 32 != 0 or an
// offset view).
#include <cuda_bf16.h>

#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "quant/w4a16_gemm/w4a16_cuda.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_magic.cuh"

namespace kbench::kernels::w4a16 {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kMaxM = 8;
constexpr int kWarps = 4;  // rows of W per block
constexpr int kThreads = 32 * kWarps;

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <int M>
__device__ __forceinline__ void StoreRow(const float (&acc)[M], bf16* c, int64_t n, int64_t row, int lane) {
#pragma unroll
  for (int i = 0; i < M; ++i) {
    const float v = WarpSum(acc[i]);
    if (lane == 0) c[i * n + row] = __float2bfloat16_rn(v);
  }
}

// v2: lane l handles words l, l + 32, ...; each word is 8 weights of one group.
template <int M>
__global__ void __launch_bounds__(kThreads)
    GemvDequant(const bf16* __restrict__ a, const uint32_t* __restrict__ w, const bf16* __restrict__ scales,
                const bf16* __restrict__ zeros, bf16* __restrict__ c, int64_t n, int64_t k) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= n) return;
  const int64_t words = k / kW4PerWord, groups = (k + kW4Group - 1) / kW4Group;
  float acc[M] = {};
  for (int64_t i = lane; i < words; i += 32) {
    const uint32_t word = w[row * words + i];
    const int64_t g = row * groups + i * kW4PerWord / kW4Group;
    const float s = __bfloat162float(scales[g]), z = __bfloat162float(zeros[g]);
    float part[M] = {};
#pragma unroll
    for (int j = 0; j < kW4PerWord; ++j) {
      const float q = static_cast<float>((word >> (4 * W4Nibble(j))) & 0xfu) - z;
#pragma unroll
      for (int r = 0; r < M; ++r) part[r] = fmaf(q, __bfloat162float(a[r * k + i * kW4PerWord + j]), part[r]);
    }
#pragma unroll
    for (int r = 0; r < M; ++r) acc[r] = fmaf(s, part[r], acc[r]);
  }
  StoreRow<M>(acc, c, n, row, lane);
}

// v3: lane l handles 16-byte chunks l, l + 32, ... (32 weights of one group each), all loads of a
// lane's chunks issued before their math (up to kChunks at a time).
template <int M>
__global__ void __launch_bounds__(kThreads)
    GemvMagic(const bf16* __restrict__ a, const uint32_t* __restrict__ w, const bf16* __restrict__ scales,
              const bf16* __restrict__ zeros, bf16* __restrict__ c, int64_t n, int64_t k) {
  constexpr int kChunks = 4;
  // Scales and zeros requested with the weights for M <= 4; wider M needs those registers for A
  // (ptxas spills at M = 5..8 otherwise), and loads them in the loop.
  constexpr bool kPrefetchScales = M <= 4;
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= n) return;
  const int64_t chunks = k / 32, groups = (k + kW4Group - 1) / kW4Group;
  const uint4* wrow = reinterpret_cast<const uint4*>(w + row * (k / kW4PerWord));
  float acc[M] = {};
  for (int64_t base = 0; base < chunks; base += 32 * kChunks) {
    // Weights (and for M <= 4 scales and zero points) requested before any math: the scales and zeros
    // are DRAM misses too, and loaded inside the loop they cost a round trip a chunk.
    uint4 pk[kChunks];
    float sc[kChunks], ze[kChunks];
#pragma unroll
    for (int u = 0; u < kChunks; ++u) {
      const int64_t ch = base + u * 32 + lane;
      pk[u] = ch < chunks ? __ldg(wrow + ch) : make_uint4(0, 0, 0, 0);
      if constexpr (kPrefetchScales) {
        const int64_t g = row * groups + (ch < chunks ? ch : 0) * 32 / kW4Group;
        sc[u] = __bfloat162float(scales[g]), ze[u] = __bfloat162float(zeros[g]);
      }
    }
#pragma unroll
    for (int u = 0; u < kChunks; ++u) {
      const int64_t ch = base + u * 32 + lane;
      if (ch >= chunks) break;
      const int64_t g = row * groups + ch * 32 / kW4Group;
      const float s = kPrefetchScales ? sc[u] : __bfloat162float(scales[g]);
      const float zf = 128.0f + (kPrefetchScales ? ze[u] : __bfloat162float(zeros[g]));
      const uint32_t zz = PackBf16Pair(zf);
      const uint32_t words[4] = {pk[u].x, pk[u].y, pk[u].z, pk[u].w};
      float part[M] = {};
#pragma unroll
      for (int q = 0; q < 4; ++q) {  // word q: k = 32ch + 8q .. +7
        uint32_t av[M][4];
#pragma unroll
        for (int r = 0; r < M; ++r) {
          const uint4 v = __ldg(reinterpret_cast<const uint4*>(a + r * k + ch * 32 + q * 8));
          av[r][0] = v.x, av[r][1] = v.y, av[r][2] = v.z, av[r][3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {  // elements 2i, 2i+1 of the word
          const uint32_t d = HSub2(MagicPair(words[q] >> (4 * i)), zz);
          const float w0 = LowBf16(d), w1 = HighBf16(d);
#pragma unroll
          for (int r = 0; r < M; ++r) {
            part[r] = fmaf(w0, LowBf16(av[r][i]), part[r]);
            part[r] = fmaf(w1, HighBf16(av[r][i]), part[r]);
          }
        }
      }
#pragma unroll
      for (int r = 0; r < M; ++r) acc[r] = fmaf(s, part[r], acc[r]);
    }
  }
  StoreRow<M>(acc, c, n, row, lane);
}

// Calls f with the compile-time M (1..8; 1..16 with kUpTo16) of the problem.
template <bool kUpTo16 = false, typename F>
int WithM(int64_t m, F&& f) {
  if constexpr (kUpTo16) {
    switch (m) {
      case 9:
        return f(std::integral_constant<int, 9>{});
      case 10:
        return f(std::integral_constant<int, 10>{});
      case 11:
        return f(std::integral_constant<int, 11>{});
      case 12:
        return f(std::integral_constant<int, 12>{});
      case 13:
        return f(std::integral_constant<int, 13>{});
      case 14:
        return f(std::integral_constant<int, 14>{});
      case 15:
        return f(std::integral_constant<int, 15>{});
      case 16:
        return f(std::integral_constant<int, 16>{});
      default:
        break;
    }
  }
  switch (m) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    case 6:
      return f(std::integral_constant<int, 6>{});
    case 7:
      return f(std::integral_constant<int, 7>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    default:
      return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses it
  }
}

}  // namespace

// v2 instantiated up to M = 16: the fallback of the tensor-core GEMV (w4a16_mma_gemv.cu) too.
int LaunchW4GemvDequant(const W4Args& g, cudaStream_t s) {
  const auto grid = static_cast<unsigned>(cuda::CeilDiv(g.n, kWarps));
  return WithM<true>(g.m, [&](auto m) {
    GemvDequant<decltype(m)::value>
        <<<grid, kThreads, 0, s>>>(static_cast<const bf16*>(g.a), g.w, static_cast<const bf16*>(g.scales),
                                   static_cast<const bf16*>(g.zeros), static_cast<bf16*>(g.c), g.n, g.k);
    KB_LAUNCH_CHECK();
    return 0;
  });
}

namespace {

int LaunchV2(const W4Args& g, cudaStream_t s) { return LaunchW4GemvDequant(g, s); }

int RunV2(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  return LaunchV2(g, s);
}

}  // namespace

int LaunchW4GemvMagic(const W4Args& g, cudaStream_t s) {
  // 16-byte loads need rows of whole chunks (K % 32 == 0) and aligned bases.
  if (g.k % 32 != 0 || !cuda::Aligned16(g.a) || !cuda::Aligned16(g.w)) return LaunchV2(g, s);
  const auto grid = static_cast<unsigned>(cuda::CeilDiv(g.n, kWarps));
  return WithM(g.m, [&](auto m) {
    GemvMagic<decltype(m)::value>
        <<<grid, kThreads, 0, s>>>(static_cast<const bf16*>(g.a), g.w, static_cast<const bf16*>(g.scales),
                                   static_cast<const bf16*>(g.zeros), static_cast<bf16*>(g.c), g.n, g.k);
    KB_LAUNCH_CHECK();
    return 0;
  });
}

namespace {

int RunV3(const Problem& p, std::span<const Tensor> t, void* stream) {
  const W4Args g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  return LaunchW4GemvMagic(g, s);
}

std::string SkipGemv(const Problem& p) {
  if (p.dim("M") > kMaxM)
    return "M = " + std::to_string(p.dim("M")) + " > 8: the GEMV rungs keep one accumulator per row of A (decode only)";
  if (p.dim("N") > int64_t{65535} * 65535 / 2) return "N too large for the grid";
  return "";
}

std::vector<LaunchInfo> LaunchesV2(const Problem& p) {
  const void* f = p.dim("M") <= 1 ? (const void*)&GemvDequant<1> : (const void*)&GemvDequant<8>;
  return {{"GemvDequant<M>", f, kThreads, 0}};
}
std::vector<LaunchInfo> LaunchesV3(const Problem& p) {
  const void* f = p.dim("M") <= 1 ? (const void*)&GemvMagic<1> : (const void*)&GemvMagic<8>;
  return {{"GemvMagic<M>", f, kThreads, 0}};
}

}  // namespace

void AddW4a16GemvVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v2_gemv_dequant",
      .description = "M <= 8: a warp per weight row, 4-byte loads, dequantized with shifts and masks.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = SkipGemv,
      .run_cuda = RunV2,
      .launches = LaunchesV2,
  });
  op.variants.push_back({
      .name = "cuda_v3_gemv_magic",
      .description = "M <= 8: 16-byte weight loads, lop3 magic-number dequantization into bf16 pairs.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = SkipGemv,
      .run_cuda = RunV3,
      .launches = LaunchesV3,
  });
}

}  // namespace kbench::kernels::w4a16
