// rope on CUDA: rotary embedding of q and k at each token's position, bf16 storage, float math.
// 8 B moved per rotated pair for 6 FLOPs: memory-bound; the rungs differ in where cos and sin come
// from.
//
// Rungs (both: a block per token; the token's d/2 cos and d/2 sin staged once in shared memory and
// used by all its q_heads + kv_heads heads; each thread takes 16-byte packs of a head, NeoX: 8 pairs
// from a 16-byte load of each half, GPT-J: 4 adjacent pairs from one 16-byte load (at head_dim 64
// and 128, a pack of each half as NeoX, 8 pairs); a thread's first packs are loaded before the
// staging so that their latency overlaps the position and cache reads. head_dim 64 and 128 are
// compiled for: a pack's head and place are then a shift and a mask, not a division (the pack loop
// was mostly integer work; 2.5-7% faster on the H200). head_dim not a multiple of 16 (NeoX) or 8
// (GPT-J), or unaligned pointers, take one pair a thread):
//   cuda_v1_cache     cos and sin read from cos_sin_cache[position] (f32), 4*head_dim bytes a token
//                     beyond the op's minimum (2.4% at Llama-3-8B's heads), mostly L2 hits.
//   cuda_v2_computed  cos and sin computed: sincosf(float(pos) * inv_freq_i) for the d/2 pairs of the
//                     token (inv_freq_i in double, rounded to float: rope_math.h), no cache traffic.
// In place: q_out may be q and k_out k (no __restrict__ between them): every element is read and
// written by the same thread, its read first.
#include <climits>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "elementwise/rope/rope.h"
#include "elementwise/rope/rope_math.h"

namespace kbench::kernels {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kBlock = 128;
constexpr int kUnroll = 4;  // packs a thread loads before it computes

struct Args {
  const bf16* q;
  const bf16* k;
  const int32_t* pos;
  const float* cache;
  bf16* q_out;
  bf16* k_out;
  int64_t tokens;
  int q_heads, kv_heads, d;
};

// A token's rows of q and k, in and out: the block's 64-bit offsets, taken once.
struct TokenRows {
  const bf16* q;
  const bf16* k;
  bf16* q_out;
  bf16* k_out;
};

__device__ __forceinline__ TokenRows RowsOf(const Args& a, int64_t t, int d) {
  const int64_t qo = t * a.q_heads * d, ko = t * a.kv_heads * d;
  return {a.q + qo, a.k + ko, a.q_out + qo, a.k_out + ko};
}

// Pack `it` of the token: its head's source and destination rows and the pack's index in the head.
struct PackRef {
  const bf16* src;
  bf16* dst;
  int chunk;
};

// `it` is never negative: unsigned division, a shift when chunks is a compile-time power of two.
__device__ __forceinline__ PackRef PackOf(const Args& a, const TokenRows& rows, int it, int chunks, int d) {
  const int head = static_cast<int>(static_cast<unsigned>(it) / static_cast<unsigned>(chunks));
  const int chunk = it - head * chunks;
  if (head < a.q_heads) return {rows.q + head * d, rows.q_out + head * d, chunk};
  const int off = (head - a.q_heads) * d;  // < (q_heads + kv_heads) d <= INT_MAX (Skip)
  return {rows.k + off, rows.k_out + off, chunk};
}

// Stages the token's cos (cs[0..half)) and sin (cs[half..d)) in shared memory.
template <bool kComputed>
__device__ __forceinline__ void StageCosSin(const Args& a, int64_t t, int d, float* cs) {
  const int half = d / 2;
  const int pos = a.pos[t];
  for (int i = threadIdx.x; i < half; i += kBlock) {
    float c, s;
    if constexpr (kComputed) {
      sincosf(rope::Angle(pos, rope::InvFreq(i, d)), &s, &c);
    } else {
      c = a.cache[static_cast<int64_t>(pos) * d + i];
      s = a.cache[static_cast<int64_t>(pos) * d + half + i];
    }
    cs[i] = c;
    cs[half + i] = s;
  }
}

// kW 8: 16-byte packs (NeoX: a pack of each half; GPT-J: one pack of 4 pairs); kW 1: one pair.
// kD: head_dim when known at compile time (64, 128: a pack's head and place are a shift and a mask
// away, and GPT-J takes two packs an item, one from each half as NeoX does: half the items, so a
// Llama-3 token's 40 heads fit one round of kUnroll items a thread; two adjacent packs a lane were
// 26-28% slower, each load then touching every other 16 bytes of the warp's span), 0 for any other
// (a.d, a division a pack).
template <bool kGptj, bool kComputed, int kW, int kD>
__global__ void __launch_bounds__(kBlock) RopeKernel(Args a) {
  extern __shared__ float cs[];
  const int64_t t = blockIdx.x;
  const int d = kD > 0 ? kD : a.d;
  const int half = d / 2;
  // Items a head: NeoX (and wide GPT-J) kW elements of each half; GPT-J kW elements (kW/2 pairs);
  // kW 1: one pair.
  constexpr bool kWide = kGptj && kW == 8 && kD > 0;
  const int chunks = kW == 1 ? half : (kGptj && !kWide ? d / kW : half / kW);
  const int items = (a.q_heads + a.kv_heads) * chunks;
  const TokenRows rows = RowsOf(a, t, d);
  const auto load = [&](int it, uint4& lo, uint4& hi) {
    const PackRef r = PackOf(a, rows, it, chunks, d);
    if constexpr (kW == 8) {
      lo = *reinterpret_cast<const uint4*>(r.src + r.chunk * kW);
      if constexpr (!kGptj || kWide) hi = *reinterpret_cast<const uint4*>(r.src + half + r.chunk * kW);
    } else {
      const int ia = kGptj ? 2 * r.chunk : r.chunk, ib = kGptj ? ia + 1 : r.chunk + half;
      lo.x = __bfloat16_as_ushort(r.src[ia]);
      hi.x = __bfloat16_as_ushort(r.src[ib]);
    }
  };
  const auto rotate_store = [&](int it, const uint4& lo, const uint4& hi) {
    const PackRef r = PackOf(a, rows, it, chunks, d);
    if constexpr (kW == 8) {
      float x[8];
      cuda::WidenPack<bf16>(lo, x);
      if constexpr (kWide) {
        float y[8];
        cuda::WidenPack<bf16>(hi, y);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int i = r.chunk * 4 + k, j = half / 2 + i;
          const float c = cs[i], s = cs[half + i], xa = x[2 * k], xb = x[2 * k + 1];
          x[2 * k] = xa * c - xb * s;
          x[2 * k + 1] = xb * c + xa * s;
          const float cj = cs[j], sj = cs[half + j], ya = y[2 * k], yb = y[2 * k + 1];
          y[2 * k] = ya * cj - yb * sj;
          y[2 * k + 1] = yb * cj + ya * sj;
        }
        cuda::StoreFloats<bf16, 8>(r.dst + r.chunk * kW, x);
        cuda::StoreFloats<bf16, 8>(r.dst + half + r.chunk * kW, y);
      } else if constexpr (kGptj) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int i = r.chunk * 4 + k;
          const float c = cs[i], s = cs[half + i], xa = x[2 * k], xb = x[2 * k + 1];
          x[2 * k] = xa * c - xb * s;
          x[2 * k + 1] = xb * c + xa * s;
        }
        cuda::StoreFloats<bf16, 8>(r.dst + r.chunk * kW, x);
      } else {
        float y[8];
        cuda::WidenPack<bf16>(hi, y);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const int i = r.chunk * 8 + k;
          const float c = cs[i], s = cs[half + i], xa = x[k], xb = y[k];
          x[k] = xa * c - xb * s;
          y[k] = xb * c + xa * s;
        }
        cuda::StoreFloats<bf16, 8>(r.dst + r.chunk * kW, x);
        cuda::StoreFloats<bf16, 8>(r.dst + half + r.chunk * kW, y);
      }
    } else {
      const int i = r.chunk, ia = kGptj ? 2 * i : i, ib = kGptj ? ia + 1 : i + half;
      const float c = cs[i], s = cs[half + i];
      const float xa = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(lo.x)));
      const float xb = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(hi.x)));
      r.dst[ia] = __float2bfloat16_rn(xa * c - xb * s);
      r.dst[ib] = __float2bfloat16_rn(xb * c + xa * s);
    }
  };
  uint4 lo[kUnroll], hi[kUnroll];
  const int step = kUnroll * kBlock;
  // The first packs are in flight while the position and cos/sin are read.
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int it = threadIdx.x + u * kBlock;
    if (it < items) load(it, lo[u], hi[u]);
  }
  StageCosSin<kComputed>(a, t, d, cs);
  __syncthreads();
  for (int base = threadIdx.x; base < items; base += step) {
    if (base != static_cast<int>(threadIdx.x)) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int it = base + u * kBlock;
        if (it < items) load(it, lo[u], hi[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int it = base + u * kBlock;
      if (it < items) rotate_store(it, lo[u], hi[u]);
    }
  }
}

using KernelFn = void (*)(Args);

template <bool kGptj, bool kComputed>
KernelFn PickVec(int d) {
  if (d == 128) return &RopeKernel<kGptj, kComputed, 8, 128>;
  if (d == 64) return &RopeKernel<kGptj, kComputed, 8, 64>;
  return &RopeKernel<kGptj, kComputed, 8, 0>;
}

template <bool kComputed>
KernelFn Pick(bool gptj, bool vec, int d) {
  if (gptj) return vec ? PickVec<true, kComputed>(d) : &RopeKernel<true, kComputed, 1, 0>;
  return vec ? PickVec<false, kComputed>(d) : &RopeKernel<false, kComputed, 1, 0>;
}

bool VecOk(const Args& a, bool gptj) {
  const bool shape = gptj ? a.d % 8 == 0 : a.d % 16 == 0;
  return shape && cuda::Aligned16(a.q) && cuda::Aligned16(a.k) && cuda::Aligned16(a.q_out) &&
         cuda::Aligned16(a.k_out);
}

template <bool kComputed>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{.q = static_cast<const bf16*>(t[0].data),
               .k = static_cast<const bf16*>(t[1].data),
               .pos = static_cast<const int32_t*>(t[2].data),
               .cache = static_cast<const float*>(t[3].data),
               .q_out = static_cast<bf16*>(t[4].data),
               .k_out = static_cast<bf16*>(t[5].data),
               .tokens = p.dim("tokens"),
               .q_heads = static_cast<int>(p.dim("q_heads")),
               .kv_heads = static_cast<int>(p.dim("kv_heads")),
               .d = static_cast<int>(p.dim("head_dim"))};
  if (a.tokens <= 0 || a.d <= 0 || a.q_heads + a.kv_heads <= 0) return 0;  // nothing to write
  if (p.dtype != Dtype::kBF16) return static_cast<int>(cudaErrorInvalidValue);
  const bool gptj = p.has_flag("gptj");
  const KernelFn k = Pick<kComputed>(gptj, VecOk(a, gptj), a.d);
  k<<<static_cast<unsigned>(a.tokens), kBlock, static_cast<size_t>(a.d) * sizeof(float), cuda::AsStream(stream)>>>(a);
  KB_LAUNCH_CHECK();
  return 0;
}

template <bool kComputed>
std::vector<LaunchInfo> Launches(const Problem& p) {
  const bool gptj = p.has_flag("gptj");
  const int64_t d = p.dim("head_dim");
  const bool vec = gptj ? d % 8 == 0 : d % 16 == 0;
  return {{std::string("Rope<") + (gptj ? "gptj" : "neox") + (kComputed ? ",computed" : ",cache") +
               (vec ? ",w8>" : ",w1>"),
           (const void*)Pick<kComputed>(gptj, vec, static_cast<int>(d)), kBlock, d * 4}};
}

// A block per token; a head's pack index is an int.
std::string Skip(const Problem& p) {
  if (p.dim("tokens") > INT_MAX) return "tokens over 2^31-1: one block per token exceeds gridDim.x";
  if ((p.dim("q_heads") + p.dim("kv_heads")) * p.dim("head_dim") > INT_MAX)
    return "(q_heads + kv_heads) * head_dim over 2^31-1";
  return "";
}

}  // namespace

void AddRopeCudaVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_cache",
      .description = "Block per token, 16-byte packs, cos/sin from the cache staged in shared memory.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = Skip,
      .run_cuda = Run<false>,
      .launches = Launches<false>,
  });
  op.variants.push_back({
      .name = "cuda_v2_computed",
      .description = "v1 with cos/sin computed per token (sincosf), no cache read.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = Skip,
      .run_cuda = Run<true>,
      .launches = Launches<true>,
  });
}

}  // namespace kbench::kernels
