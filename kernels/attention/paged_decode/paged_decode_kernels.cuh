// The device code of the paged_decode ladder (paged_decode.cu says what each rung teaches): one
// kernel template for the three rungs, and the kernel that merges split-KV partials.
//
// A block owns kG query heads of one KV head, one sequence and one range of its tokens (a split).
// It walks the range in tiles of kTile tokens. Each token's 256-byte K (or V) row is read by a
// half-warp, 16 bytes a lane, so a lane always holds the same 8 columns of d: its 8 columns of the
// kG query rows sit in registers (pre-scaled by log2(e)/sqrt(d), so the softmax is exp2), and so do
// its 8 columns of the kG output accumulators. A tile is three phases over shared memory:
//   scores  each half-warp forms kG partial dot products a token and sums them over its 16 lanes
//           with a reduce-scatter (kG values, log2(kG) halving steps, then whole-sum steps: 8
//           shuffles for kG = 8 instead of 32), the lane that ends with head g's score storing it;
//   softmax one warp a head: the tile's max, the new running max, p = exp2(s - m), the rescale
//           factor of what came before, the running sum;
//   P V     each lane rescales its accumulators once and adds p * V for its tokens.
// At the end the two half-warps and the warps are summed in a fixed order (the same bits every run),
// and the block writes either out (one split) or its unnormalized partial with (max, sum).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/warp_reduce.cuh"

namespace kbench::kernels::paged_decode {

constexpr int kHeadDim = 128;
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kTile = 64;                         // tokens a block handles per tile (2 a warp-step)
constexpr int kRowBytes = kHeadDim * 2;           // one token's K or V row of one KV head, bf16
constexpr int kChunks = kRowBytes / 16;           // 16-byte chunks of a row: a half-warp's lanes
constexpr int kIters = kTile / (kWarps * 2);      // tokens of a tile per half-warp
constexpr int kStageBytes = 2 * kTile * kRowBytes;  // cp.async stage: the tile's K rows, then its V rows

struct DecodeArgs {
  const __nv_bfloat16* q;
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  const int32_t* block_table;
  const int32_t* lens;
  __nv_bfloat16* out;
  float* part_o;    // [batch, H, splits, d]: a split's unnormalized sum of p * V
  float2* part_ml;  // [batch, H, splits]: its (running max in log2 units, sum of p)
  unsigned* counters;  // [batch, H / heads a block]: splits done; null: a second kernel merges
  int heads, kv_heads, group, page, max_pages;
  int page_shift;  // log2(page) when page is a power of two (1, 16, 256), else -1: no division
  int chunk;   // tokens a split covers (a multiple of kTile)
  int splits;  // gridDim.x; 1: out is written directly, no merge
  float scale_log2;
};

// One lane's 16 bytes of a row, raw. Unaligned tensors (an offset view) take eight 2-byte loads.
template <bool kAligned>
__device__ __forceinline__ uint4 LoadChunk(const __nv_bfloat16* p) {
  if constexpr (kAligned) {
    return __ldg(reinterpret_cast<const uint4*>(p));
  } else {
    const auto* s = reinterpret_cast<const unsigned short*>(p);
    uint4 r;
    r.x = __ldg(s) | (static_cast<uint32_t>(__ldg(s + 1)) << 16);
    r.y = __ldg(s + 2) | (static_cast<uint32_t>(__ldg(s + 3)) << 16);
    r.z = __ldg(s + 4) | (static_cast<uint32_t>(__ldg(s + 5)) << 16);
    r.w = __ldg(s + 6) | (static_cast<uint32_t>(__ldg(s + 7)) << 16);
    return r;
  }
}

// bf16 is the high half of a float: widening is a shift or a mask.
__device__ __forceinline__ void Widen(const uint4& r, float (&f)[8]) {
  f[0] = __uint_as_float(r.x << 16), f[1] = __uint_as_float(r.x & 0xffff0000u);
  f[2] = __uint_as_float(r.y << 16), f[3] = __uint_as_float(r.y & 0xffff0000u);
  f[4] = __uint_as_float(r.z << 16), f[5] = __uint_as_float(r.z & 0xffff0000u);
  f[6] = __uint_as_float(r.w << 16), f[7] = __uint_as_float(r.w & 0xffff0000u);
}

// Sums kG values over the 16 lanes of a half-warp. The first log2(kG) steps halve the values a lane
// holds (it keeps one half, sends the other to its partner and adds what it receives), the rest sum
// the last one; afterwards the lane holds head *head's total.
template <int kG>
__device__ __forceinline__ float ReduceScatter16(float (&v)[kG], int lane, int* head) {
  int h = 0;
#pragma unroll
  for (int level = 0; level < 4; ++level) {
    const int offset = 8 >> level;
    const int n = kG >> level;  // values still held; constant once unrolled
    if (n >= 2) {
      const bool upper = lane & offset;
#pragma unroll
      for (int i = 0; i < kG / 2; ++i) {
        if (i >= n / 2) break;
        const float send = upper ? v[i] : v[i + n / 2];
        const float keep = upper ? v[i + n / 2] : v[i];
        v[i] = keep + __shfl_xor_sync(cuda::kFullWarp, send, offset);
      }
      if (upper) h += n / 2;
    } else {
      v[0] += __shfl_xor_sync(cuda::kFullWarp, v[0], offset);
    }
  }
  *head = h;
  return v[0];
}

__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// kG query heads a block (1, 2, 4 or 8); kStages 0: K and V read from global memory by the lanes
// that use them; kStages >= 2: a ring of kStages tiles in dynamic shared memory filled by cp.async,
// kStages - 1 tiles ahead. kAligned: q, k and v are 16-byte aligned.
template <int kG, int kStages, bool kAligned>
__global__ void __launch_bounds__(kThreads) PagedDecodeKernel(DecodeArgs a) {
  static_assert(kTile == 64, "the softmax phase gives each lane two tokens of a tile");
  extern __shared__ __align__(16) unsigned char ring[];
  __shared__ __align__(16) float s_p[kTile][kG];  // scores, then probabilities
  __shared__ float s_m[kG], s_l[kG], s_alpha[kG];
  __shared__ float s_red[kWarps][kG][kHeadDim];

  const int split = blockIdx.x, b = blockIdx.z;
  const int h0 = blockIdx.y * kG, kvh = h0 / a.group;
  const int len = a.lens[b];
  const int t_begin = split * a.chunk;
  if (t_begin >= len) return;  // a shorter sequence needs fewer splits; the merge reads only its own
  const int t_end = min(len, t_begin + a.chunk);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, sub = lane & 15, half = lane >> 4;
  const int64_t token_stride = static_cast<int64_t>(a.kv_heads) * kHeadDim;  // rows of a page
  const int32_t* table = a.block_table + static_cast<int64_t>(b) * a.max_pages;
  // Element offset of token t's row of this KV head.
  const auto row_of = [&](int t) {
    int index, offset;
    if (a.page_shift >= 0) index = t >> a.page_shift, offset = t & ((1 << a.page_shift) - 1);
    else index = t / a.page, offset = t - index * a.page;
    return (static_cast<int64_t>(table[index]) * a.page + offset) * token_stride + static_cast<int64_t>(kvh) * kHeadDim;
  };

  float qv[kG][8], acc[kG][8];
#pragma unroll
  for (int g = 0; g < kG; ++g) {
    Widen(LoadChunk<kAligned>(a.q + (static_cast<int64_t>(b) * a.heads + h0 + g) * kHeadDim + sub * 8), qv[g]);
#pragma unroll
    for (int e = 0; e < 8; ++e) qv[g][e] *= a.scale_log2, acc[g][e] = 0.0f;
  }
  if (threadIdx.x < kG) s_m[threadIdx.x] = -INFINITY, s_l[threadIdx.x] = 0.0f;

  // cp.async ring: the tile starting at `tile` into slot `slot`; one commit group a tile, empty or not.
  const auto issue = [&](int tile, int slot) {
    if constexpr (kStages > 0) {
      if (tile < t_end) {
        unsigned char* dst = ring + slot * kStageBytes;
        const int n = min(kTile, t_end - tile);
        for (int c = threadIdx.x; c < kTile * kChunks; c += kThreads) {
          const int i = c / kChunks, part = c % kChunks;
          if (i >= n) break;  // c grows with i: the rest of this thread's chunks are past the range too
          const int64_t off = row_of(tile + i) + part * 8;
          CpAsync16(dst + i * kRowBytes + part * 16, a.k + off);
          CpAsync16(dst + (kTile + i) * kRowBytes + part * 16, a.v + off);
        }
      }
      CpAsyncCommit();
    }
  };
  if constexpr (kStages > 0) {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) issue(t_begin + s * kTile, s);
  }

  int slot = 0;
  for (int tile = t_begin; tile < t_end; tile += kTile) {
    const int n = min(kTile, t_end - tile);
    const unsigned char* stage = ring + slot * kStageBytes;
    if constexpr (kStages > 0) {
      issue(tile + (kStages - 1) * kTile, (slot + kStages - 1) % kStages);
      CpAsyncWait<kStages - 1>();  // this tile's copies (this thread's) have landed
      __syncthreads();             // and everyone's
    }
    // Scores: kIters tokens a half-warp, every load issued before the first use.
    uint4 raw[kIters];
#pragma unroll
    for (int j = 0; j < kIters; ++j) {
      const int i = (warp * kIters + j) * 2 + half;
      raw[j] = make_uint4(0, 0, 0, 0);
      if (i < n) {
        if constexpr (kStages > 0) raw[j] = *reinterpret_cast<const uint4*>(stage + i * kRowBytes + sub * 16);
        else raw[j] = LoadChunk<kAligned>(a.k + row_of(tile + i) + sub * 8);
      }
    }
#pragma unroll
    for (int j = 0; j < kIters; ++j) {
      const int i = (warp * kIters + j) * 2 + half;
      float kf[8], part[kG];
      Widen(raw[j], kf);
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        part[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) part[g] = fmaf(qv[g][e], kf[e], part[g]);
      }
      int head = 0;
      const float score = ReduceScatter16<kG>(part, lane, &head);
      if ((lane & (16 / kG - 1)) == 0) s_p[i][head] = i < n ? score : -INFINITY;
    }
    __syncthreads();
    // Softmax of the tile, one warp a head.
    for (int g = warp; g < kG; g += kWarps) {
      const float x0 = s_p[lane][g], x1 = s_p[lane + 32][g];
      const float m_old = s_m[g], m_new = fmaxf(m_old, cuda::WarpMax(fmaxf(x0, x1)));
      const float p0 = exp2f(x0 - m_new), p1 = exp2f(x1 - m_new);
      s_p[lane][g] = p0, s_p[lane + 32][g] = p1;
      const float sum = cuda::WarpSum(p0 + p1);
      if (lane == 0) {
        const float alpha = exp2f(m_old - m_new);  // 0 on the first tile (m_old = -inf)
        s_alpha[g] = alpha, s_l[g] = s_l[g] * alpha + sum, s_m[g] = m_new;
      }
    }
    __syncthreads();
    // P V: rescale what came before, then add this tile's tokens.
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      const float alpha = s_alpha[g];
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] *= alpha;
    }
#pragma unroll
    for (int j = 0; j < kIters; ++j) {
      const int i = (warp * kIters + j) * 2 + half;
      raw[j] = make_uint4(0, 0, 0, 0);
      if (i < n) {
        if constexpr (kStages > 0) raw[j] = *reinterpret_cast<const uint4*>(stage + (kTile + i) * kRowBytes + sub * 16);
        else raw[j] = LoadChunk<kAligned>(a.v + row_of(tile + i) + sub * 8);
      }
    }
#pragma unroll
    for (int j = 0; j < kIters; ++j) {
      const int i = (warp * kIters + j) * 2 + half;
      if (i >= n) continue;
      float vf[8];
      Widen(raw[j], vf);
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        const float p = s_p[i][g];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(p, vf[e], acc[g][e]);
      }
    }
    __syncthreads();  // s_p and this slot are refilled next
    if constexpr (kStages > 0) slot = (slot + 1) % kStages;
  }
  if constexpr (kStages > 0) CpAsyncWait<0>();  // the empty tail groups

  // The block's sums: the two half-warps, then the warps in order.
#pragma unroll
  for (int g = 0; g < kG; ++g)
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(cuda::kFullWarp, acc[g][e], 16);
  if (half == 0) {
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
      for (int e = 0; e < 8; ++e) s_red[warp][g][sub * 8 + e] = acc[g][e];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < kG * kHeadDim; idx += kThreads) {
    const int g = idx / kHeadDim, dd = idx % kHeadDim;
    float o = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) o += s_red[w][g][dd];
    const int64_t bh = static_cast<int64_t>(b) * a.heads + h0 + g;
    if (a.splits == 1) {
      a.out[bh * kHeadDim + dd] = __float2bfloat16_rn(o / s_l[g]);
    } else {
      a.part_o[(bh * a.splits + split) * kHeadDim + dd] = o;
      if (dd == 0) a.part_ml[bh * a.splits + split] = make_float2(s_m[g], s_l[g]);
    }
  }
}

// One block per (query head, sequence), a thread per column: the sequence's splits combined in
// split order, each weighted by exp2(its max - the overall max).
__global__ void __launch_bounds__(kHeadDim) PagedDecodeMerge(DecodeArgs a) {
  const int h = blockIdx.x, b = blockIdx.y, dd = threadIdx.x;
  const int n = min(a.splits, (a.lens[b] + a.chunk - 1) / a.chunk);
  const int64_t bh = static_cast<int64_t>(b) * a.heads + h;
  const float2* ml = a.part_ml + bh * a.splits;
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) m = fmaxf(m, ml[i].x);
  float l = 0.0f, o = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float w = exp2f(ml[i].x - m);
    l = fmaf(w, ml[i].y, l);
    o = fmaf(w, a.part_o[(bh * a.splits + i) * kHeadDim + dd], o);
  }
  a.out[bh * kHeadDim + dd] = __float2bfloat16_rn(o / l);
}

}  // namespace kbench::kernels::paged_decode
