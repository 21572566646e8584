// The fp64 device reference of paged_decode, for problems too large for the CPU one (a decode
// preset's batch 64 at 32k tokens is 34 GFLOP): the same math as paged_decode_ref.cc, in double, on
// the same bf16 inputs. One block per (query head, sequence): a first pass finds the max score, a
// second forms p = exp(s - max) for 128 tokens at a time in shared memory, then each thread (a
// column of d) adds p * V over them. Tested against the CPU reference in the GPU test.
#include <cuda_bf16.h>

#include <cmath>
#include <span>

#include "attention/paged_decode/paged_decode.h"
#include "core/cuda/cuda_check.cuh"

namespace kbench::kernels::paged_decode {
namespace {

constexpr int kRefThreads = 128;  // = d: a thread per column in the P V pass

struct RefArgs {
  const __nv_bfloat16 *q, *k, *v;
  const int32_t *table, *lens;
  double* out;
  int heads, kv_heads, group, page, max_pages;
  double scale;
};

__device__ double Score(const RefArgs& a, const double* q, int b, int kvh, int t) {
  const int page = a.table[static_cast<int64_t>(b) * a.max_pages + t / a.page];
  const __nv_bfloat16* row =
      a.k + ((static_cast<int64_t>(page) * a.page + t % a.page) * a.kv_heads + kvh) * kRefThreads;
  double dot = 0;
  for (int i = 0; i < kRefThreads; ++i) dot += q[i] * static_cast<double>(__bfloat162float(row[i]));
  return dot * a.scale;
}

__global__ void __launch_bounds__(kRefThreads) PagedDecodeReferenceF64(RefArgs a) {
  __shared__ double q[kRefThreads], p[kRefThreads], red[kRefThreads];
  const int h = blockIdx.x, b = blockIdx.y, tid = threadIdx.x, kvh = h / a.group, len = a.lens[b];
  const int64_t bh = static_cast<int64_t>(b) * a.heads + h;
  q[tid] = __bfloat162float(a.q[bh * kRefThreads + tid]);
  __syncthreads();
  double m = -INFINITY;
  for (int t = tid; t < len; t += kRefThreads) m = fmax(m, Score(a, q, b, kvh, t));
  red[tid] = m;
  __syncthreads();
  for (int s = kRefThreads / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmax(red[tid], red[tid + s]);
    __syncthreads();
  }
  m = red[0];
  double acc = 0, l = 0;
  for (int t0 = 0; t0 < len; t0 += kRefThreads) {
    __syncthreads();  // p of the previous block of tokens is used up
    const int t = t0 + tid;
    p[tid] = t < len ? exp(Score(a, q, b, kvh, t) - m) : 0.0;
    __syncthreads();
    for (int j = 0; j < kRefThreads && t0 + j < len; ++j) {
      const int tt = t0 + j;
      const int page = a.table[static_cast<int64_t>(b) * a.max_pages + tt / a.page];
      const __nv_bfloat16* row =
          a.v + ((static_cast<int64_t>(page) * a.page + tt % a.page) * a.kv_heads + kvh) * kRefThreads;
      acc += p[j] * static_cast<double>(__bfloat162float(row[tid]));
      l += p[j];
    }
  }
  a.out[bh * kRefThreads + tid] = acc / l;
}

}  // namespace

int RunReferenceF64(const Problem& p, std::span<const Tensor> inputs, std::span<double* const> outputs, void* stream) {
  const Shape s = ShapeOf(p);
  if (outputs.empty() || inputs.size() < 5 || s.head_dim != kRefThreads) return static_cast<int>(cudaErrorInvalidValue);
  RefArgs a{};
  a.q = static_cast<const __nv_bfloat16*>(inputs[kQ].data);
  a.k = static_cast<const __nv_bfloat16*>(inputs[kKCache].data);
  a.v = static_cast<const __nv_bfloat16*>(inputs[kVCache].data);
  a.table = static_cast<const int32_t*>(inputs[kBlockTable].data);
  a.lens = static_cast<const int32_t*>(inputs[kContextLens].data);
  a.out = outputs[0];
  a.heads = static_cast<int>(s.heads), a.kv_heads = static_cast<int>(s.kv_heads), a.group = static_cast<int>(s.group());
  a.page = static_cast<int>(s.page), a.max_pages = static_cast<int>(s.max_pages);
  a.scale = SoftmaxScale(s);
  PagedDecodeReferenceF64<<<dim3(static_cast<unsigned>(s.heads), static_cast<unsigned>(s.batch)), kRefThreads, 0,
                            cuda::AsStream(stream)>>>(a);
  KB_LAUNCH_CHECK();
  return 0;
}

}  // namespace kbench::kernels::paged_decode
