// The CUDA rungs of attention_varlen and its device reference. The rungs are the attention op's
// kernels, not copies: the same FlashMma and FlashWgmma templates, launched on a packed layout
// (SeqLayout and FindWork in attention/attention_cuda.cuh; the fixed-stride batch of the attention
// op is the same code with every sequence N rows long from row 0):
//   cuda_v3_flash_mma    FA2 on mma.sync (attention_flash_mma.cu): each sequence's rows are loaded by
//                        cp.async at their packed offset (rows H*d apart), zero-filled past the
//                        sequence's end, and stored with guards on its length;
//   cuda_v4_flash_wgmma  FA3's structure on sm_90a (attention_flash_wgmma.cu): the TMA maps are
//                        [total][H][d] with a box of 1 head x 128 rows, landing in shared memory as the
//                        fixed layout's box does; a box that runs into the next sequence loads its
//                        rows, which the key mask (j >= kv_len) and the row guards on o and lse ignore.
// Work scheduling: a flattened grid, (H, total_q / 128 + seqs). Sequence b owns flat tiles from
// cu_q[b] / 128 + b on, at least as many as its 128-row query tiles; each warp of a block finds its
// sequence with one coalesced read of cu_seqlens_q and a ballot (32 sequences a step), and at most one
// block a sequence (and head) exits empty. Within a sequence the longest causal tiles come first.
// Not the (tiles of the longest sequence, H, seqs) grid with empty tiles exiting: at the skewed preset
// (one 8192-token sequence among 31 of 512-1024) 87% of that grid's blocks would be empty, each
// costing a block launch on an SM that the real tiles wait for; nor a host-side list of tiles, which
// would need the offsets on the host (a copy and a sync per launch) or a second kernel.
// Unaligned views (the tests' offset trial) run the device reference's kernel with outputs in the
// dtype, as the attention op's v3 and v4 hand such views to its SIMT rung.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention/attention_cuda.cuh"
#include "attention/attention_varlen/attention_varlen.h"
#include "gemm/gemm/gemm_cuda.cuh"  // CurrentComputeCapability

namespace kbench::kernels {
namespace attention_varlen {
namespace {

using attention::AttnArgs;
using attention::DispatchHalf;
using attention::FromF;
using attention::ToF;

constexpr int kRefWarps = 8;
constexpr int kMaxCols = 4;  // d <= 128

__device__ __forceinline__ void Put(__nv_bfloat16* p, double v) { *p = FromF<__nv_bfloat16>(static_cast<float>(v)); }
__device__ __forceinline__ void Put(__half* p, double v) { *p = FromF<__half>(static_cast<float>(v)); }
__device__ __forceinline__ void Put(float* p, double v) { *p = static_cast<float>(v); }
__device__ __forceinline__ void Put(double* p, double v) { *p = v; }

// One warp per (token, query head) row of o: the row's sequence by binary search over cu_q, then the
// attention reference's loop (attention_reference.cu): per visible key a warp-wide dot product and
// the online softmax in f32. Outputs in double (the op's device reference) or in the dtype and f32
// (the rungs' path for unaligned views).
template <typename T, typename O, typename L>
__global__ void __launch_bounds__(kRefWarps * 32)
    VarlenRowKernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                    const int32_t* __restrict__ cu_q, const int32_t* __restrict__ cu_k, O* __restrict__ o,
                    L* __restrict__ lse, int seqs, int heads, int kv_heads, int64_t total_q, int d, bool causal, float scale) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRefWarps + (threadIdx.x >> 5);  // over total_q * H
  if (row >= total_q * heads) return;
  const int64_t t = row / heads;
  const int h = static_cast<int>(row % heads);
  int lo = 0, hi = seqs;  // the last b with cu_q[b] <= t
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (cu_q[mid] <= t) lo = mid;
    else hi = mid;
  }
  const int64_t i = t - cu_q[lo], n_q = cu_q[lo + 1] - cu_q[lo], k0 = cu_k[lo], n_kv = cu_k[lo + 1] - k0;
  const int64_t keys = causal ? min(n_kv, i + n_kv - n_q + 1) : n_kv;
  const int cols = d / 32;
  const int64_t kv_stride = static_cast<int64_t>(kv_heads) * d;
  const T* kh = k + k0 * kv_stride + static_cast<int64_t>(h / (heads / kv_heads)) * d;
  const T* vh = v + (kh - k);
  float qr[kMaxCols], acc[kMaxCols];
#pragma unroll
  for (int c = 0; c < kMaxCols; ++c) {
    qr[c] = c < cols ? ToF(q[row * d + c * 32 + lane]) : 0.f;
    acc[c] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  for (int64_t j = 0; j < keys; ++j) {
    float dot = 0.f;
#pragma unroll
    for (int c = 0; c < kMaxCols; ++c)
      if (c < cols) dot += qr[c] * ToF(kh[j * kv_stride + c * 32 + lane]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    const float sc = dot * scale;
    const float m_new = fmaxf(m, sc);
    const float alpha = expf(m - m_new);  // 0 on the first key
    const float pj = expf(sc - m_new);
    l = l * alpha + pj;
#pragma unroll
    for (int c = 0; c < kMaxCols; ++c)
      if (c < cols) acc[c] = acc[c] * alpha + pj * ToF(vh[j * kv_stride + c * 32 + lane]);
    m = m_new;
  }
#pragma unroll
  for (int c = 0; c < kMaxCols; ++c)
    if (c < cols) Put(o + row * d + c * 32 + lane, acc[c] / l);
  if (lane == 0) Put(lse + h * total_q + t, static_cast<double>(m) + log(static_cast<double>(l)));
}

template <typename O, typename L>
int LaunchRows(const Problem& p, const void* q, const void* k, const void* v, const void* cu_q, const void* cu_k, O* o,
               L* lse, cudaStream_t st) {
  const Shape s = VarlenShapeOf(p);
  const int64_t rows = s.total_q * s.heads;
  if (rows <= 0) return 0;
  if (s.head_dim % 32 != 0 || s.head_dim / 32 > kMaxCols) return static_cast<int>(cudaErrorInvalidValue);
  const unsigned grid = static_cast<unsigned>(cuda::CeilDiv(rows, kRefWarps));
  return DispatchHalf(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    using OT = std::conditional_t<std::is_same_v<O, void>, T, O>;  // void: the dtype
    VarlenRowKernel<T, OT, L><<<grid, kRefWarps * 32, 0, st>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<const int32_t*>(cu_q),
        static_cast<const int32_t*>(cu_k), reinterpret_cast<OT*>(o), lse, static_cast<int>(s.seqs),
        static_cast<int>(s.heads), static_cast<int>(s.kv_heads), s.total_q, static_cast<int>(s.head_dim), s.causal,
        static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim))));
    KB_LAUNCH_CHECK();
    return 0;
  });
}

int RunReference(const Problem& p, std::span<const Tensor> in, std::span<double* const> out, void* stream) {
  if (in.size() < 5 || out.size() < 2) return static_cast<int>(cudaErrorInvalidValue);
  return LaunchRows<double, double>(p, in[kQ].data, in[kK].data, in[kV].data, in[kCuQ].data, in[kCuK].data, out[0], out[1],
                                    cuda::AsStream(stream));
}

// The attention op's kernels' view of the problem: b = sequences, n_q / n_kv the longest lengths.
AttnArgs ArgsOf(const Problem& p, std::span<const Tensor> t) {
  const Shape s = VarlenShapeOf(p);
  AttentionShape a{s.seqs, s.heads, s.kv_heads, s.max_q(), s.max_q() + s.prefix, s.head_dim, s.causal};
  a.scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  return AttnArgs{t[kQ].data, t[kK].data, t[kV].data, t[kO].data, static_cast<float*>(t[kLse].data), a, p.dtype};
}

template <bool kWgmma>
int RunRung(const Problem& p, std::span<const Tensor> t, void* stream) {
  const cudaStream_t st = cuda::AsStream(stream);
  const AttnArgs a = ArgsOf(p, t);
  const Shape s = VarlenShapeOf(p);
  for (const void* ptr : {a.q, a.k, a.v, static_cast<const void*>(a.o)})
    if (!cuda::Aligned16(ptr))
      return LaunchRows<void, float>(p, a.q, a.k, a.v, t[kCuQ].data, t[kCuK].data, static_cast<void*>(a.o), a.lse, st);
  const attention::SeqLayout lay = attention::PackedLayout(a.s, s.total_q, static_cast<const int32_t*>(t[kCuQ].data),
                                                           static_cast<const int32_t*>(t[kCuK].data));
  return kWgmma ? attention::LaunchFlashWgmmaPacked(a, lay, s.total_q, s.total_kv, st)
                : attention::LaunchFlashMmaPacked(a, lay, s.total_q, s.total_kv, st);
}

std::string SkipCommon(const Problem& p) {
  const Shape s = VarlenShapeOf(p);
  if (s.head_dim != 64 && s.head_dim != 128) return "written for d = 64 and 128 only, not d = " + std::to_string(s.head_dim);
  if (attention::PackedTiles(s.total_q, s.seqs, 128) > 65535)
    return "total_q / 128 + seqs exceeds gridDim.y's 65535 (the flattened tile grid)";
  return "";
}

std::string SkipWgmma(const Problem& p) {
  if (std::string why = SkipCommon(p); !why.empty()) return why;
  std::string why;
  const int cc = gemm::CurrentComputeCapability(&why);
  if (cc == 0) return why;
  if (cc != 90)
    return "needs an sm_90 (Hopper) device: wgmma, TMA and setmaxnreg are built only as sm_90a machine code, which runs "
           "on compute capability 9.0 alone; this device is " +
           std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  return "";
}

}  // namespace
}  // namespace attention_varlen

void AddAttentionVarlenCudaVariants(OpDef& op) {
  op.gpu_reference = attention_varlen::RunReference;
  op.variants.push_back({
      .name = "cuda_v3_flash_mma",
      .description = "The attention op's FA2 mma.sync kernel on packed sequences: flattened tile grid, per-sequence offsets.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16, Dtype::kF16},
      .min_compute_capability = 80,
      .skip_reason = attention_varlen::SkipCommon,
      .run_cuda = attention_varlen::RunRung<false>,
      .launches = attention::FlashMmaLaunches,
  });
  op.variants.push_back({
      .name = "cuda_v4_flash_wgmma",
      .description = "The attention op's Hopper TMA + wgmma kernel on packed sequences: [total][H][d] tensor maps.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16, Dtype::kF16},
      .min_compute_capability = 90,
      .skip_reason = attention_varlen::SkipWgmma,
      .run_cuda = attention_varlen::RunRung<true>,
      .launches = attention::FlashWgmmaLaunches,
  });
}

}  // namespace kbench::kernels
