// attention cuda_v2_flash_simt: FlashAttention's idea on CUDA cores. One block owns 32 query rows
// of one (batch, head) and walks the keys in tiles of 32: K and V tiles go through shared memory, the
// 32x32 scores of a tile live in registers (a lane holds one key's score for each of its warp's 4
// rows), and the softmax is online: a running max m and sum l per row, the output accumulator scaled
// by exp(m_old - m_new) whenever the max grows, divided by l once at the end. One pass, no N^2 bytes:
// Q, K, V are read once per block and O written once, so the traffic is O(N d) per row tile; what is
// left is arithmetic on the FMA pipes (~1/15 of the tensor cores' rate), which the next rung moves.
// Scores are kept in the log2 domain (q pre-scaled by scale * log2(e)) so each exponential is one
// exp2 instruction. Causal: key tiles past the block's last visible key are not visited; the tile on
// the diagonal is masked element by element.
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention/attention_cuda.cuh"
#include "core/cuda/occupancy.cuh"

namespace kbench::kernels::attention {
namespace {

constexpr int kRows = 32, kKeys = 32, kWarps = 8, kRowsPerWarp = kRows / kWarps, kThreads = kWarps * 32;

template <int D>
constexpr int SimtSmemBytes() {
  return (kRows * D + kKeys * (D + 1) + kKeys * D) * 4;  // q, k (padded: lane j reads row j), v
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    FlashSimt(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o,
              float* __restrict__ lse, AttentionShape s, float scale_log2) {
  extern __shared__ float smem[];
  float* qs = smem;                   // [kRows][D], pre-scaled
  float* ks = qs + kRows * D;         // [kKeys][D + 1]
  float* vs = ks + kKeys * (D + 1);   // [kKeys][D]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t bh = blockIdx.y;
  const int64_t kv_head = (bh / s.h) * s.h_kv + (bh % s.h) / (s.h / s.h_kv);
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kRows;
  const T* qh = q + bh * s.n_q * s.d;
  const T* kh = k + kv_head * s.n_kv * s.d;
  const T* vh = v + kv_head * s.n_kv * s.d;
  const int64_t shift = s.n_kv - s.n_q;  // causal: row i sees keys <= i + shift

  for (int e = threadIdx.x; e < kRows * D; e += kThreads) {
    const int64_t i = i0 + e / D;
    qs[e] = i < s.n_q ? ToF(qh[i * D + e % D]) * scale_log2 : 0.f;
  }
  float m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][D / 32];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    m[r] = -INFINITY, l[r] = 0.f;
#pragma unroll
    for (int t = 0; t < D / 32; ++t) acc[r][t] = 0.f;
  }
  const int64_t last_row = min(i0 + kRows, s.n_q) - 1;
  const int64_t key_end = s.causal ? min(s.n_kv, last_row + shift + 1) : s.n_kv;

  for (int64_t j0 = 0; j0 < key_end; j0 += kKeys) {
    __syncthreads();  // the previous tile is no longer read (and, the first time, q is written)
    for (int e = threadIdx.x; e < kKeys * D; e += kThreads) {
      const int jj = e / D, c = e % D;
      const bool in = j0 + jj < s.n_kv;
      ks[jj * (D + 1) + c] = in ? ToF(kh[(j0 + jj) * D + c]) : 0.f;
      vs[e] = in ? ToF(vh[(j0 + jj) * D + c]) : 0.f;
    }
    __syncthreads();
    // Scores: lane = key j0 + lane, for the warp's 4 rows.
    float sc[kRowsPerWarp] = {};
    const float* krow = ks + lane * (D + 1);
#pragma unroll 8
    for (int c = 0; c < D; c += 4) {
      const float k0 = krow[c], k1 = krow[c + 1], k2 = krow[c + 2], k3 = krow[c + 3];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const float4 qv = *reinterpret_cast<const float4*>(qs + (warp * kRowsPerWarp + r) * D + c);  // broadcast
        sc[r] += qv.x * k0 + qv.y * k1 + qv.z * k2 + qv.w * k3;
      }
    }
    const int64_t j = j0 + lane;
    float p[kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t i = i0 + warp * kRowsPerWarp + r;
      const bool visible = j < s.n_kv && (!s.causal || j <= i + shift);
      float x = visible ? sc[r] : -INFINITY;
      float tmax = x;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, off));
      const float m_new = fmaxf(m[r], tmax);
      // A row with nothing visible yet (a padding row, or a causal row before its first key) keeps
      // m = -inf; exp2(-inf - -inf) would be NaN.
      const float base = m_new == -INFINITY ? 0.f : m_new;
      const float alpha = exp2f(m[r] - base);
      p[r] = exp2f(x - base);
      float psum = p[r];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) psum += __shfl_xor_sync(0xffffffffu, psum, off);
      l[r] = l[r] * alpha + psum;
      m[r] = m_new;
#pragma unroll
      for (int t = 0; t < D / 32; ++t) acc[r][t] *= alpha;
    }
    // O += P V: key jj's probabilities come from lane jj, V's row jj from shared memory.
#pragma unroll 4
    for (int jj = 0; jj < kKeys; ++jj) {
      float vv[D / 32];
#pragma unroll
      for (int t = 0; t < D / 32; ++t) vv[t] = vs[jj * D + t * 32 + lane];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const float pj = __shfl_sync(0xffffffffu, p[r], jj);
#pragma unroll
        for (int t = 0; t < D / 32; ++t) acc[r][t] += pj * vv[t];
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = i0 + warp * kRowsPerWarp + r;
    if (i >= s.n_q) continue;
    const float inv = 1.f / l[r];
#pragma unroll
    for (int t = 0; t < D / 32; ++t) o[(bh * s.n_q + i) * D + t * 32 + lane] = FromF<T>(acc[r][t] * inv);
    // m is in log2 units of the scaled score: ln(sum exp(s)) = m ln 2 + ln l.
    if (lane == 0) lse[bh * s.n_q + i] = m[r] * 0.69314718055994531f + logf(l[r]);
  }
}

template <typename T, int D>
int LaunchSimt(const AttnArgs& a, cudaStream_t st) {
  constexpr int kSmem = SimtSmemBytes<D>();
  const auto kernel = FlashSimt<T, D>;
  KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(kernel), kSmem));
  const dim3 grid(static_cast<unsigned>(cuda::CeilDiv(a.s.n_q, kRows)), static_cast<unsigned>(a.s.b * a.s.h));
  kernel<<<grid, kThreads, kSmem, st>>>(static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
                                        static_cast<T*>(a.o), a.lse, a.s, static_cast<float>(a.s.scale * 1.4426950408889634));
  KB_LAUNCH_CHECK();
  return 0;
}

int RunSimt(const Problem& p, std::span<const Tensor> t, void* stream) {
  const AttnArgs a = ArgsOf(p, t);
  const cudaStream_t st = cuda::AsStream(stream);
  return DispatchHalf(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.s.d == 64) return LaunchSimt<T, 64>(a, st);
    if (a.s.d == 128) return LaunchSimt<T, 128>(a, st);
    return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses it
  });
}

std::string SkipSimt(const Problem& p) {
  const AttentionShape s = ShapeOf(p);
  if (std::string why = HeadDimSkip(s, {64, 128}); !why.empty()) return why;
  return SizeSkip(s);
}

std::vector<LaunchInfo> LaunchesSimt(const Problem& p) {
  const bool f16 = p.dtype == Dtype::kF16, d64 = p.dim("d") == 64;
  const void* f = f16 ? (d64 ? (const void*)&FlashSimt<__half, 64> : (const void*)&FlashSimt<__half, 128>)
                      : (d64 ? (const void*)&FlashSimt<__nv_bfloat16, 64> : (const void*)&FlashSimt<__nv_bfloat16, 128>);
  return {{std::string("FlashSimt<d=") + (d64 ? "64>" : "128>"), f, kThreads, d64 ? SimtSmemBytes<64>() : SimtSmemBytes<128>()}};
}

}  // namespace

int RunAttentionFlashSimt(const Problem& p, std::span<const Tensor> t, void* stream) { return RunSimt(p, t, stream); }

void AddAttentionFlashSimtVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v2_flash_simt",
      .description = "Tiled online softmax in one pass on CUDA cores: no N^2 memory.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16, Dtype::kF16},
      .skip_reason = SkipSimt,
      .run_cuda = RunSimt,
      .launches = LaunchesSimt,
  });
}

}  // namespace kbench::kernels::attention
