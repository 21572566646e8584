// Shared pieces of the CUDA attention ladder (attention_*.cu): the problem as the launchers see it,
// the element types (bf16 and f16) and their conversions, the skip reasons every rung shares, and
// each file's registration function. AddAttentionCudaVariants (attention_reference.cu) calls those in
// ladder order and sets the op's device reference.
//
// The contract of every launcher: q [B,H,N_q,d], k and v [B,H_kv,N_kv,d], o [B,H,N_q,d], all
// contiguous (d innermost), lse [B,H,N_q] f32; query head h reads KV head h / (H / H_kv); the causal
// mask keeps keys j <= i + N_kv - N_q (attention_ref.h). Tensors from the worker are 256-byte aligned.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "attention/attention/attention_ref.h"
#include "core/cuda/cuda_check.cuh"
#include "core/op.h"
#include "gemm/gemm/gemm_ptx.cuh"

namespace kbench::kernels::attention {

// d += a * b on the tensor cores, mma.sync.m16n8k16 with f32 accumulation, in T (bf16 or f16): the
// mma.sync rung's two GEMMs and the wgmma rung's rare recomputation of a score tile.
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    gemm::ptx::MmaBf16(d, a, b0, b1);
  }
}

struct AttnArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  AttentionShape s;
  Dtype dtype = Dtype::kUnspecified;
};

inline AttnArgs ArgsOf(const Problem& p, std::span<const Tensor> t) {
  return AttnArgs{t[0].data, t[1].data, t[2].data, t[3].data, static_cast<float*>(t[4].data), ShapeOf(p), p.dtype};
}

// Where the rows of one (sequence, head) live, so one kernel serves both ops: row i of query head h
// of sequence b is at q + b*q_batch + h*q_head + (q0 + i)*q_row (o likewise), its lse at
// lse + b*lse_batch + h*lse_head + q0 + i, and key j of KV head g at k + b*kv_batch + g*kv_head +
// (k0 + j)*kv_row. The attention op's fixed-stride batch ([B,H,N,d], every sequence N_q rows from
// q0 = 0) and the varlen op's packed one ([total, H, d], sequence b's rows from q0 = cu_q[b]) are two
// settings of these numbers (in elements).
struct SeqLayout {
  int64_t q_batch = 0, q_head = 0, q_row = 0;
  int64_t kv_batch = 0, kv_head = 0, kv_row = 0;
  int64_t lse_batch = 0, lse_head = 0;
  // Varlen: sequence b's queries are packed rows [cu_q[b], cu_q[b+1]), its keys [cu_k[b], cu_k[b+1]);
  // the AttentionShape's n_q / n_kv are then the longest sequence's (size checks only). Null: fixed.
  const int32_t* cu_q = nullptr;
  const int32_t* cu_k = nullptr;
  // Causal, fixed layout: heads taken head_group at a time, longest query tiles first within a
  // group (FindWork); 0: a head's tiles one after another.
  int head_group = 0;
};

// Causal blocks are launched in groups of this many (batch, head) pairs, every head's longest query
// tile before any head's next one. With a head's tiles one after another (longest first), the last
// head's longest tile started a few blocks before the grid's end and ran long after the other SMs
// had emptied; across all heads at once, each block would re-read its head's K and V from HBM (the
// concurrent heads' K and V do not fit L2). 8 heads: 16 MB of K and V at N = 4096, d = 128. On the
// H200 (B8 H16 N4096 d128 causal, one run) cuda_v3 took 1735 instead of 1806 us and cuda_v4 934
// instead of 940; 16 gave v4 the same as none.
inline constexpr int kCausalHeadGroup = 8;

// [B,H,N_q,d] and [B,H_kv,N_kv,d], lse [B,H,N_q]: the attention op.
inline SeqLayout FixedLayout(const AttentionShape& s) {
  return SeqLayout{.q_batch = s.h * s.n_q * s.d, .q_head = s.n_q * s.d, .q_row = s.d,
                   .kv_batch = s.h_kv * s.n_kv * s.d, .kv_head = s.n_kv * s.d, .kv_row = s.d,
                   .lse_batch = s.h * s.n_q, .lse_head = s.n_q, .head_group = kCausalHeadGroup};
}

// q, o [total_q, H, d], k, v [total_kv, H_kv, d], lse [H, total_q]: FlashAttention's varlen form.
inline SeqLayout PackedLayout(const AttentionShape& s, int64_t total_q, const int32_t* cu_q, const int32_t* cu_k) {
  return SeqLayout{.q_batch = 0, .q_head = s.d, .q_row = s.h * s.d, .kv_batch = 0, .kv_head = s.d, .kv_row = s.h_kv * s.d,
                   .lse_batch = 0, .lse_head = total_q, .cu_q = cu_q, .cu_k = cu_k};
}

// Grid rows of a varlen launch: sequence b owns the flat tiles [cu_q[b] / block_m + b, cu_q[b+1] /
// block_m + b + 1), at least ceil(n_q(b) / block_m) of them (floor(x + n) - floor(x) + 1 >= ceil(n)),
// so total_q / block_m + seqs tiles cover every sequence with at most one empty tile each.
inline int64_t PackedTiles(int64_t total_q, int64_t seqs, int block_m) { return total_q / block_m + seqs; }

// One block's work: query tile m_block of query head h of sequence b, whose n_q queries start at
// packed row q0 and n_kv keys at k0 (0 in the fixed layout). empty: a varlen block past its
// sequence's last tile, which exits.
struct BlockWork {
  int64_t b = 0, h = 0, m_block = 0, q0 = 0, k0 = 0, n_q = 0, n_kv = 0;
  bool empty = false;
};

// Called by whole warps (every lane active). Fixed layout: grid (query tiles, B*H); causal, the
// longest tiles of head_group heads first (kCausalHeadGroup says why). Varlen: grid (H,
// PackedTiles): the warp finds its block's sequence with one coalesced read of the offsets (32
// sequences a ballot), and within a sequence the longest causal tiles come first, so a long first
// sequence is scheduled before the short ones.
// The fixed layout's work of launch-order block id (blockIdx.x + blockIdx.y gridDim.x of a grid
// (tiles, pairs), tiles = query tiles a head, pairs = B*H); a persistent kernel walks these ids.
__device__ __forceinline__ BlockWork FixedWorkAt(const AttentionShape& s, const SeqLayout& l, int64_t id, int64_t tiles,
                                                 int64_t pairs) {
  BlockWork w;
  w.n_q = s.n_q, w.n_kv = s.n_kv;
  if (s.causal && l.head_group > 0) {
    // Group g of head_group (batch, head) pairs, within it query tile level r / gsize (longest
    // first), then the pair.
    const int64_t per_group = l.head_group * tiles, g = id / per_group, r = id % per_group;
    const int64_t left = pairs - g * l.head_group;
    const int64_t gsize = left < l.head_group ? left : l.head_group;
    const int64_t bh = g * l.head_group + r % gsize;
    w.b = bh / s.h, w.h = bh % s.h;
    w.m_block = tiles - 1 - r / gsize;
    return w;
  }
  const int64_t bh = id / tiles, x = id % tiles;
  w.b = bh / s.h, w.h = bh % s.h;
  w.m_block = s.causal ? tiles - 1 - x : x;
  return w;
}

template <int kBlockM>
__device__ __forceinline__ BlockWork FindWork(const AttentionShape& s, const SeqLayout& l) {
  BlockWork w;
  if (l.cu_q == nullptr && s.causal && l.head_group > 0)
    return FixedWorkAt(s, l, blockIdx.x + static_cast<int64_t>(blockIdx.y) * gridDim.x, gridDim.x, gridDim.y);
  // FixedWorkAt's other case, read straight off the grid: it would divide the id by the tiles again.
  if (l.cu_q == nullptr) {
    const int64_t bh = blockIdx.y;
    w.b = bh / s.h, w.h = bh % s.h;
    w.m_block = s.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    w.n_q = s.n_q, w.n_kv = s.n_kv;
    return w;
  }
  w.h = blockIdx.x;
  const int64_t g = blockIdx.y;
  const int lane = threadIdx.x & 31;
  // Lane l holds offsets base + l of both tensors: the count of sequences whose first flat tile is
  // <= g (strictly increasing in b) gives b, and the offsets of b and b + 1 come from the same
  // registers when they lie in this chunk: one round trip to L2 before the block's first load.
  int count = 0, base = 0, cq = 0, ck = 0;
  for (;; base += 32) {
    const int idx = base + lane;
    cq = idx <= s.b ? l.cu_q[idx] : 0;
    ck = idx <= s.b ? l.cu_k[idx] : 0;
    const unsigned m = __ballot_sync(0xffffffffu, idx < s.b && cq / kBlockM + idx <= g);
    count += __popc(m);
    if (m != 0xffffffffu || base + 32 >= s.b) break;
  }
  w.b = count - 1;
  const int lb = static_cast<int>(w.b) - base;  // the same in every lane
  if (lb >= 0 && lb < 31) {
    w.q0 = __shfl_sync(0xffffffffu, cq, lb), w.n_q = __shfl_sync(0xffffffffu, cq, lb + 1) - w.q0;
    w.k0 = __shfl_sync(0xffffffffu, ck, lb), w.n_kv = __shfl_sync(0xffffffffu, ck, lb + 1) - w.k0;
  } else {
    w.q0 = l.cu_q[w.b], w.n_q = l.cu_q[w.b + 1] - w.q0;
    w.k0 = l.cu_k[w.b], w.n_kv = l.cu_k[w.b + 1] - w.k0;
  }
  const int64_t local = g - (w.q0 / kBlockM + w.b), tiles = (w.n_q + kBlockM - 1) / kBlockM;
  w.empty = local >= tiles;
  w.m_block = s.causal ? tiles - 1 - local : local;
  return w;
}

__device__ __forceinline__ float ToF(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ToF(__half v) { return __half2float(v); }
template <typename T>
__device__ __forceinline__ T FromF(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __half FromF<__half>(float v) { return __float2half_rn(v); }

// Calls f(T{}) with T = __nv_bfloat16 or __half for the problem's dtype; any other dtype is
// cudaErrorInvalidValue (the rungs declare only these two).
template <typename F>
int DispatchHalf(Dtype d, F&& f) {
  switch (d) {
    case Dtype::kBF16: return f(__nv_bfloat16{});
    case Dtype::kF16: return f(__half{});
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <typename T>
inline const char* TypeName() {
  return std::is_same_v<T, __half> ? "f16" : "bf16";
}

// The rungs index rows with 32-bit ints inside a head and grid dimensions with blockIdx.y/z.
inline std::string SizeSkip(const AttentionShape& s) {
  if (s.n_q * s.d > INT_MAX || s.n_kv * s.d > INT_MAX) return "N * d exceeds 2^31-1 (32-bit indexing inside a head)";
  if (s.b * s.h > 65535) return "B * H = " + std::to_string(s.b * s.h) + " exceeds gridDim.y's 65535";
  return "";
}

// "" when the rung has code for head dimension d; otherwise the reason.
inline std::string HeadDimSkip(const AttentionShape& s, std::initializer_list<int> supported) {
  std::string names;
  for (int d : supported) {
    if (d == s.d) return "";
    names += (names.empty() ? "" : ", ") + std::to_string(d);
  }
  return "this rung is written for d = " + names + " only, not d = " + std::to_string(s.d);
}

// Registration of each file's rungs (ladder order is AddAttentionCudaVariants').
void AddAttentionNaiveVariant(OpDef& op);      // attention_naive.cu: cuda_v1_naive
void AddAttentionFlashSimtVariant(OpDef& op);  // attention_flash_simt.cu: cuda_v2_flash_simt
void AddAttentionFlashMmaVariant(OpDef& op);   // attention_flash_mma.cu: cuda_v3_flash_mma
void AddAttentionFlashWgmmaVariant(OpDef& op); // attention_flash_wgmma.cu: cuda_v4_flash_wgmma (sm_90a)

// cuda_v2_flash_simt's launch (attention_flash_simt.cu): plain loads, so any element alignment. The
// rungs whose cp.async, ldmatrix or TMA need 16-byte aligned tensors run it on an offset view (the
// tests' unaligned trials; the harness's cudaMalloc'd tensors are always aligned), as the GEMM's
// wgmma rung hands such views to mma.sync: a refusal code would read as a lost CUDA context.
int RunAttentionFlashSimt(const Problem& p, std::span<const Tensor> t, void* stream);

// The varlen launches of cuda_v3_flash_mma and cuda_v4_flash_wgmma (the same kernels as the attention
// op's, on a PackedLayout; grid (H, PackedTiles)). a.s: b = sequences, n_q / n_kv the longest
// sequence's lengths; total_q sizes the lse layout. 16-byte aligned q, k, v, o (the caller checks).
int LaunchFlashMmaPacked(const AttnArgs& a, const SeqLayout& l, int64_t total_q, int64_t total_kv, cudaStream_t st);
int LaunchFlashWgmmaPacked(const AttnArgs& a, const SeqLayout& l, int64_t total_q, int64_t total_kv, cudaStream_t st);
// Their kernels for the resource report (p's dtype and dim d).
std::vector<LaunchInfo> FlashMmaLaunches(const Problem& p);
std::vector<LaunchInfo> FlashWgmmaLaunches(const Problem& p);

// The device reference (attention_reference.cu): a warp per query row, f32 accumulation, outputs
// widened to double.
int RunAttentionReferenceF32(const Problem& p, std::span<const Tensor> inputs, std::span<double* const> outputs,
                             void* stream);

}  // namespace kbench::kernels::attention
