// The attention op's device reference, and the registration of the whole CUDA attention ladder.
//
// The reference: one warp per query row, lane l holding columns l, l + 32, ... of q and of the
// output; for each visible key a warp-wide dot product (shuffle reduction), then the online softmax
// update in f32 (running max m, running sum l, the output rescaled by exp(m_old - m_new)). Nothing is
// tiled or staged, so it is obviously the definition; f32 accumulation keeps its error ~1e-6, far
// inside the bf16/f16 tolerance. It exists because the fp64 CPU reference needs hours at B8 H16 N4096
// d128; tests/gpu/attention_gpu_test.cc checks it against the CPU one on small shapes.
#include <cmath>

#include "attention/attention/attention.h"
#include "attention/attention/attention_cuda.cuh"

namespace kbench::kernels {
namespace attention {
namespace {

constexpr int kRefWarps = 8;
constexpr int kMaxCols = 8;  // d <= 256

template <typename T>
__global__ void __launch_bounds__(kRefWarps * 32)
    AttentionReferenceKernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, double* __restrict__ o,
                             double* __restrict__ lse, AttentionShape s, float scale) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRefWarps + (threadIdx.x >> 5);  // over B*H*N_q
  if (row >= s.b * s.h * s.n_q) return;
  const int64_t i = row % s.n_q, bh = row / s.n_q;
  const int64_t b = bh / s.h, h = bh % s.h;
  const int64_t kv_head = b * s.h_kv + h / (s.h / s.h_kv);
  const T* kh = k + kv_head * s.n_kv * s.d;
  const T* vh = v + kv_head * s.n_kv * s.d;
  const int cols = static_cast<int>(s.d / 32);
  float qr[kMaxCols], acc[kMaxCols];
#pragma unroll
  for (int t = 0; t < kMaxCols; ++t) {
    qr[t] = t < cols ? ToF(q[row * s.d + t * 32 + lane]) : 0.f;
    acc[t] = 0.f;
  }
  const int64_t keys = s.causal ? min(s.n_kv, i + s.n_kv - s.n_q + 1) : s.n_kv;
  float m = -INFINITY, l = 0.f;
  for (int64_t j = 0; j < keys; ++j) {
    float dot = 0.f;
#pragma unroll
    for (int t = 0; t < kMaxCols; ++t)
      if (t < cols) dot += qr[t] * ToF(kh[j * s.d + t * 32 + lane]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    const float sc = dot * scale;
    const float m_new = fmaxf(m, sc);
    const float alpha = expf(m - m_new);  // 0 on the first key (m = -inf)
    const float pj = expf(sc - m_new);
    l = l * alpha + pj;
#pragma unroll
    for (int t = 0; t < kMaxCols; ++t)
      if (t < cols) acc[t] = acc[t] * alpha + pj * ToF(vh[j * s.d + t * 32 + lane]);
    m = m_new;
  }
#pragma unroll
  for (int t = 0; t < kMaxCols; ++t)
    if (t < cols) o[row * s.d + t * 32 + lane] = static_cast<double>(acc[t] / l);
  if (lane == 0) lse[row] = static_cast<double>(m) + log(static_cast<double>(l));
}

}  // namespace

int RunAttentionReferenceF32(const Problem& p, std::span<const Tensor> inputs, std::span<double* const> outputs,
                             void* stream) {
  if (inputs.size() < 3 || outputs.size() < 2) return static_cast<int>(cudaErrorInvalidValue);
  const AttentionShape s = ShapeOf(p);
  if (s.d % 32 != 0 || s.d / 32 > kMaxCols || s.h_kv <= 0 || s.h % s.h_kv != 0) return static_cast<int>(cudaErrorInvalidValue);
  const int64_t rows = s.b * s.h * s.n_q;
  if (rows <= 0) return 0;
  const unsigned grid = static_cast<unsigned>(cuda::CeilDiv(rows, kRefWarps));
  return DispatchHalf(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    AttentionReferenceKernel<T><<<grid, kRefWarps * 32, 0, cuda::AsStream(stream)>>>(
        static_cast<const T*>(inputs[0].data), static_cast<const T*>(inputs[1].data), static_cast<const T*>(inputs[2].data),
        outputs[0], outputs[1], s, static_cast<float>(s.scale));
    KB_LAUNCH_CHECK();
    return 0;
  });
}

}  // namespace attention

// The ladder in teaching order: the unfused baseline, the flash idea on CUDA cores, then on the
// tensor cores (mma.sync, then Hopper's wgmma and TMA).
void AddAttentionCudaVariants(OpDef& op) {
  op.gpu_reference = attention::RunAttentionReferenceF32;
  attention::AddAttentionNaiveVariant(op);
  attention::AddAttentionFlashSimtVariant(op);
  attention::AddAttentionFlashMmaVariant(op);
  attention::AddAttentionFlashWgmmaVariant(op);
}

}  // namespace kbench::kernels
