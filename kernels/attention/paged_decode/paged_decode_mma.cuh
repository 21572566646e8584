// The tensor-core kernel of paged_decode's cuda_v4_gqa_mma rung (paged_decode.cu says what it
// teaches). The G query heads of a KV head are the M rows of mma.sync.m16n8k16 (bf16 in, f32
// accumulate; rows past G are zero padding, a waste the tensor cores can afford), 16 tokens a step:
//   S[16 x 16] = Q[16 x 128] K^T    two n-tiles of 8 tokens, 8 k-steps; K's fragments by ldmatrix
//   P = exp2(S * scale - m)         online softmax in the accumulator layout, a row's 16 scores
//                                   spread over the 4 lanes of a quad (2 shuffles for the max)
//   O[16 x 128] += P V              the S accumulators are already P's A fragments (FlashAttention-2's
//                                   register trick); P split into bf16 hi + lo, two MMAs, so P keeps
//                                   ~16 bits and the result stays as accurate as float FMAs; V's
//                                   fragments by ldmatrix.trans.
// Each warp owns every 4th 16-token group of the block's split and its own cp.async ring (3 stages
// of 8 KB: the group's K rows then its V rows, 16-byte chunks XOR-swizzled by row so ldmatrix's 8
// rows hit 8 bank groups), so the main loop has no block barrier at all; tokens past the split are
// zero-filled by the copy and masked. The four warps' (max, sum, O) are merged in warp order at the
// end, then written as out or as the split's partial, as the CUDA-core kernel does.
#pragma once

#include "attention/attention/smem_swizzle.h"
#include "attention/paged_decode/paged_decode_kernels.cuh"
#include "core/cuda/fast_exp2.cuh"

namespace kbench::kernels::paged_decode {

constexpr int kGroupTokens = 16;
constexpr int kMmaStages = 3;
constexpr int kMmaStageBytes = 2 * kGroupTokens * kRowBytes;          // 8 KB
constexpr int kMmaSmem = kWarps * kMmaStages * kMmaStageBytes;        // 96 KB
static_assert(kTile % kGroupTokens == 0, "a split's chunk (a multiple of kTile) starts on a group");

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes, or 16 zero bytes when !valid (src-size 0: nothing is read).
__device__ __forceinline__ void CpAsync16Zfill(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}

__device__ __forceinline__ void Ldmatrix4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

__device__ __forceinline__ void Ldmatrix4Trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// c += A B with A's rows g + 8 zero (a1 = a3 = 0): only rows g carry heads.
__device__ __forceinline__ void MmaRowsG(float (&c)[4], uint32_t a0, uint32_t a2, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
}

// (x, y) as bf16 pairs hi + lo with hi + lo = (x, y) to about 2^-17 relative.
__device__ __forceinline__ void SplitBf16x2(float x, float y, uint32_t& hi, uint32_t& lo) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
  hi = *reinterpret_cast<const uint32_t*>(&h);
  const __nv_bfloat162 l =
      __floats2bfloat162_rn(x - __uint_as_float(hi << 16), y - __uint_as_float(hi & 0xffff0000u));
  lo = *reinterpret_cast<const uint32_t*>(&l);
}

// The split-KV merge without a second kernel: each block publishes its partial and counts itself
// in; the last of the sequence's splits to arrive (whichever it is) combines them in split order,
// so the bits do not depend on the order of arrival. The counter is left at zero for the next launch.
// The merge is the tail of the kernel (one block a sequence and head group does it after its own
// split), so its loads go out together: every split's (max, sum) into shared memory at once, the
// weights from there, then each output's partials 16 splits a round trip; read one after another,
// 2n dependent L2 round trips held batch 1 x 32k (n = 32) about a third under its read stream.
// `smem` is the block's dynamic shared memory (free by now), at least 12 kG n bytes.
template <int kG>
__device__ __forceinline__ void MergeIfLast(const DecodeArgs& a, int b, int h0, int len, unsigned char* smem) {
  __shared__ bool last;
  const int n = min(a.splits, (len + a.chunk - 1) / a.chunk);  // splits this sequence runs
  __threadfence();  // this thread's partial is visible device-wide before the block counts in
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* counter = a.counters + static_cast<int64_t>(b) * gridDim.y + blockIdx.y;
    last = atomicAdd(counter, 1u) == static_cast<unsigned>(n - 1);
    if (last) *counter = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t bh0 = static_cast<int64_t>(b) * a.heads + h0;
  float2* s_ml = reinterpret_cast<float2*>(smem);        // [kG][n]: each split's (max, sum)
  float* s_w = reinterpret_cast<float*>(s_ml + kG * n);  // [kG][n]: each split's weight
  for (int i = threadIdx.x; i < kG * n; i += kThreads) s_ml[i] = __ldcg(&a.part_ml[(bh0 + i / n) * a.splits + i % n]);
  __syncthreads();
  for (int row = warp; row < kG; row += kWarps) {  // a warp a row: its max, its sum, the weights
    float m = -INFINITY, l = 0.0f;
    for (int i = lane; i < n; i += 32) m = fmaxf(m, s_ml[row * n + i].x);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(cuda::kFullWarp, m, o));
    for (int i = lane; i < n; i += 32) l = fmaf(exp2f(s_ml[row * n + i].x - m), s_ml[row * n + i].y, l);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) l += __shfl_xor_sync(cuda::kFullWarp, l, o);
    for (int i = lane; i < n; i += 32) s_w[row * n + i] = exp2f(s_ml[row * n + i].x - m) / l;
  }
  __syncthreads();
  constexpr int kBatch = 16;
  for (int idx = threadIdx.x; idx < kG * kHeadDim; idx += kThreads) {
    const int row = idx / kHeadDim, dd = idx % kHeadDim;
    const float* po = a.part_o + (bh0 + row) * a.splits * kHeadDim + dd;
    const float* w = s_w + row * n;
    float o = 0.0f;
    int i = 0;
    for (; i + kBatch <= n; i += kBatch) {
      float v[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) v[j] = __ldcg(po + static_cast<int64_t>(i + j) * kHeadDim);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) o = fmaf(w[i + j], v[j], o);
    }
    for (; i < n; ++i) o = fmaf(w[i], __ldcg(po + static_cast<int64_t>(i) * kHeadDim), o);
    a.out[(bh0 + row) * kHeadDim + dd] = __float2bfloat16_rn(o);
  }
}

// kGroupInPage: the page size is a multiple of kGroupTokens, so a 16-token group lies in one page.
template <int kG, bool kGroupInPage>
__global__ void __launch_bounds__(kThreads) PagedDecodeMmaKernel(DecodeArgs a) {
  static_assert(kG >= 1 && kG <= 8, "heads are the rows g < 8 of the MMA tile");
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float s_ml[kWarps][kG][2];

  const int split = blockIdx.x, b = blockIdx.z;
  const int h0 = blockIdx.y * kG, kvh = h0 / a.group;
  const int len = a.lens[b];
  const int t_begin = split * a.chunk;
  if (t_begin >= len) return;
  const int t_end = min(len, t_begin + a.chunk);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int groups = (t_end - t_begin + kGroupTokens - 1) / kGroupTokens;
  const int mine = groups > warp ? (groups - warp + kWarps - 1) / kWarps : 0;  // groups warp, warp + 4, ...
  unsigned char* ring = smem + warp * kMmaStages * kMmaStageBytes;
  const int64_t token_stride = static_cast<int64_t>(a.kv_heads) * kHeadDim;
  const int32_t* table = a.block_table + static_cast<int64_t>(b) * a.max_pages;
  const auto row_of = [&](int tok) {
    int index, offset;
    if (a.page_shift >= 0) index = tok >> a.page_shift, offset = tok & ((1 << a.page_shift) - 1);
    else index = tok / a.page, offset = tok - index * a.page;
    return (static_cast<int64_t>(table[index]) * a.page + offset) * token_stride + static_cast<int64_t>(kvh) * kHeadDim;
  };

  // Q's A fragments, row g = head h0 + g: per k-step, columns (2t, 2t+1) and (2t+8, 2t+9).
  uint32_t qa[8][2];
  {
    const auto* q = reinterpret_cast<const unsigned short*>(a.q + (static_cast<int64_t>(b) * a.heads + h0 + g) * kHeadDim);
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      qa[kk][0] = qa[kk][1] = 0u;
      if (g < kG) {
        const int c = 16 * kk + 2 * t;
        qa[kk][0] = q[c] | (static_cast<uint32_t>(q[c + 1]) << 16);
        qa[kk][1] = q[c + 8] | (static_cast<uint32_t>(q[c + 9]) << 16);
      }
    }
  }

  // This warp's iteration `it` (group warp + 4 it) into ring slot `slot`; one commit group each.
  // A lane copies chunk c of rows r0 + 2i (i < 8) of K and of V. Rows r and r + 8 share a swizzle,
  // so four destination offsets, planned once, serve the eight rows (the last four 2 KB on). When
  // the page size is a multiple of 16, a group is one page (groups start at multiples of 16): one
  // block-table read a group, the rows a fixed stride apart, instead of a table read and a 64-bit
  // row offset per row.
  const int r0 = lane >> 4, c = lane & 15;
  uint32_t dst[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) dst[i] = attention::Swz<kHeadDim>(r0 + 2 * i, c);
  const int64_t col = static_cast<int64_t>(kvh) * kHeadDim + c * 8;
  const int row_step = static_cast<int>(2 * token_stride);  // a page of rows is far under 2^31 elements
  const auto issue = [&](int it, int slot) {
    if (it < mine) {
      const int tok0 = t_begin + (warp + it * kWarps) * kGroupTokens;
      const uint32_t base = SmemAddr(ring + slot * kMmaStageBytes);
      if constexpr (kGroupInPage) {
        const int index = a.page_shift >= 0 ? tok0 >> a.page_shift : tok0 / a.page;
        const int64_t first = (static_cast<int64_t>(table[index]) * a.page + (tok0 - index * a.page) + r0) * token_stride + col;
        const __nv_bfloat16* k = a.k + first;
        const __nv_bfloat16* v = a.v + first;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const bool valid = tok0 + r0 + 2 * i < t_end;  // rows past it are in the page, zero-filled
          const uint32_t d = base + dst[i & 3] + (i >> 2) * 8 * kRowBytes;
          CpAsync16Zfill(d, k + i * row_step, valid);
          CpAsync16Zfill(d + kGroupTokens * kRowBytes, v + i * row_step, valid);
        }
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const int tok = tok0 + r0 + 2 * i;
          const bool valid = tok < t_end;
          const int64_t off = valid ? row_of(tok) + c * 8 : 0;
          const uint32_t d = base + dst[i & 3] + (i >> 2) * 8 * kRowBytes;
          CpAsync16Zfill(d, a.k + off, valid);
          CpAsync16Zfill(d + kGroupTokens * kRowBytes, a.v + off, valid);
        }
      }
    }
    CpAsyncCommit();
  };

  // ldmatrix rows: every row a lane names is lane % 8 mod 8, so a k step's swizzled chunk offset is
  // ChunkAt (one XOR with a constant of the lane) instead of each row's swizzle re-derived.
  //   K: rows (lane / 16) 8 + lane % 8, chunk 2 kk + bit 3 of the lane;
  //   V (transposed): rows bit 3 of the lane x 8 + lane % 8, chunk 2 jj + lane / 16.
  const uint32_t k_row = ((lane >> 4) * 8 + (lane & 7)) * kRowBytes;
  const uint32_t k_x16 = static_cast<uint32_t>((((lane >> 3) & 1) ^ (lane & 7)) << 4);
  const uint32_t v_row = (((lane >> 3) & 1) * 8 + (lane & 7)) * kRowBytes + kGroupTokens * kRowBytes;
  const uint32_t v_x16 = static_cast<uint32_t>(((lane >> 4) ^ (lane & 7)) << 4);

  float o[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float m_run = -INFINITY, l_run = 0.0f;  // row g; l_run is this lane's share until the end
#pragma unroll
  for (int s = 0; s < kMmaStages - 1; ++s) issue(s, s);
  for (int it = 0; it < mine; ++it) {
    __syncwarp();  // every lane has read the slot refilled next (it was used at it - 1)
    issue(it + kMmaStages - 1, (it + kMmaStages - 1) % kMmaStages);
    CpAsyncWait<kMmaStages - 1>();
    __syncwarp();  // every lane's copies of this slot have landed
    const uint32_t stage = SmemAddr(ring + (it % kMmaStages) * kMmaStageBytes);
    const uint32_t kbase = stage + k_row, vbase = stage + v_row;

    float s0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, s1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      // Matrices: tokens 0-7 / 8-15 (lane bit 4) x columns 16kk..+7 / +8..+15 (lane bit 3).
      uint32_t b00, b01, b10, b11;
      Ldmatrix4(kbase + attention::ChunkAt(k_x16, kk), b00, b01, b10, b11);
      MmaRowsG(s0, qa[kk][0], qa[kk][1], b00, b01);
      MmaRowsG(s1, qa[kk][0], qa[kk][1], b10, b11);
    }
    // Row g's scores for tokens 2t, 2t+1 (s0) and 8+2t, 9+2t (s1) of the group.
    const int tok0 = t_begin + (warp + it * kWarps) * kGroupTokens;
    float sc[4] = {s0[0], s0[1], s1[0], s1[1]};
    float mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int tok = tok0 + (i >> 1) * 8 + 2 * t + (i & 1);
      sc[i] = tok < t_end ? sc[i] * a.scale_log2 : -INFINITY;
      mx = fmaxf(mx, sc[i]);
    }
    mx = fmaxf(mx, __shfl_xor_sync(cuda::kFullWarp, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(cuda::kFullWarp, mx, 2));
    const float m_new = fmaxf(m_run, mx);
    const float alpha = cuda::FastExp2(m_run - m_new);  // 0 on the first group
    float p[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) p[i] = cuda::FastExp2(sc[i] - m_new);
    l_run = l_run * alpha + ((p[0] + p[1]) + (p[2] + p[3]));
    m_run = m_new;
#pragma unroll
    for (int j = 0; j < 16; ++j) o[j][0] *= alpha, o[j][1] *= alpha;
    uint32_t ph0, pl0, ph2, pl2;
    SplitBf16x2(p[0], p[1], ph0, pl0);
    SplitBf16x2(p[2], p[3], ph2, pl2);
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
      // Matrices: tokens 0-7 / 8-15 (lane bit 3) x columns 16jj..+7 / +8..+15 (lane bit 4), transposed.
      uint32_t b0, b1, b2, b3;
      Ldmatrix4Trans(vbase + attention::ChunkAt(v_x16, jj), b0, b1, b2, b3);
      MmaRowsG(o[2 * jj], ph0, ph2, b0, b1);
      MmaRowsG(o[2 * jj], pl0, pl2, b0, b1);
      MmaRowsG(o[2 * jj + 1], ph0, ph2, b2, b3);
      MmaRowsG(o[2 * jj + 1], pl0, pl2, b2, b3);
    }
  }
  CpAsyncWait<0>();
  l_run += __shfl_xor_sync(cuda::kFullWarp, l_run, 1);
  l_run += __shfl_xor_sync(cuda::kFullWarp, l_run, 2);

  // The warps' partials, merged in warp order (the rings are done: their memory holds them).
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);  // [kWarps][kG][kHeadDim]
  if (g < kG) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      red[(warp * kG + g) * kHeadDim + 8 * j + 2 * t] = o[j][0];
      red[(warp * kG + g) * kHeadDim + 8 * j + 2 * t + 1] = o[j][1];
    }
    if (t == 0) s_ml[warp][g][0] = m_run, s_ml[warp][g][1] = l_run;
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < kG * kHeadDim; idx += kThreads) {
    const int row = idx / kHeadDim, dd = idx % kHeadDim;
    float m = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) m = fmaxf(m, s_ml[w][row][0]);
    float l = 0.0f, acc = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float scale = exp2f(s_ml[w][row][0] - m);  // 0 for a warp that had no group
      l = fmaf(scale, s_ml[w][row][1], l);
      acc = fmaf(scale, red[(w * kG + row) * kHeadDim + dd], acc);
    }
    const int64_t bh = static_cast<int64_t>(b) * a.heads + h0 + row;
    if (a.splits == 1) {
      a.out[bh * kHeadDim + dd] = __float2bfloat16_rn(acc / l);
    } else {
      a.part_o[(bh * a.splits + split) * kHeadDim + dd] = acc;
      if (dd == 0) a.part_ml[bh * a.splits + split] = make_float2(m, l);
    }
  }
  if (a.splits > 1) MergeIfLast<kG>(a, b, h0, len, smem);
}

}  // namespace kbench::kernels::paged_decode
