// attention cuda_v1_naive: the definition, kernel by kernel, as a framework without fusion runs it,
// and the chapter's "why FlashAttention" baseline.
//   1. S = scale * Q K^T (f32, masked entries -inf) for every (batch, head) into a workspace of
//      B*H*N_q*N_kv floats: 16x16 tiles staged in shared memory, one thread per score;
//   2. a softmax kernel, one block per row: max, sum of exponentials, then P = exp(S - max) / sum
//      written over S, and the row's log-sum-exp;
//   3. O = P V, 16x16 tiles again.
// S goes to global memory and back six times (written by 1; read three times and overwritten with P
// by 2; P read by 3): 6 passes of 4*N_q*N_kv bytes per head against the 2*(N_q + 2 N_kv)*d bytes of
// Q, K, V, O. At N = 4096, d = 128 that is 384 MiB per head against 4 MiB: the N^2 traffic, not the
// FLOPs, sets the time, and it grows with N^2 while the useful bytes grow with N. The workspace is not in the cost
// model (the op's fewest bytes), which is the point: the roofline shows how far this is from it.
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention/attention_cuda.cuh"
#include "core/cuda/workspace.cuh"

namespace kbench::kernels::attention {
namespace {

constexpr int kTile = 16;
constexpr int kSoftmaxThreads = 256;
// The workspace is allocated once per process; past this the rung says SKIPPED rather than ask for it.
constexpr double kMaxWorkspaceBytes = 48.0 * (1ull << 30);

// Block (16, 16), grid (N_kv tiles, N_q tiles, B*H): S[bh][i][j] = scale * q_i . k_j, or -inf.
template <typename T>
__global__ void __launch_bounds__(kTile* kTile)
    NaiveScores(const T* __restrict__ q, const T* __restrict__ k, float* __restrict__ sc, AttentionShape s, float scale) {
  __shared__ float qs[kTile][kTile + 1];
  __shared__ float ks[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t bh = blockIdx.z;
  const int64_t kv_head = (bh / s.h) * s.h_kv + (bh % s.h) / (s.h / s.h_kv);
  const int64_t i = static_cast<int64_t>(blockIdx.y) * kTile + ty;  // query row
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kTile + tx;  // key
  const int64_t jl = static_cast<int64_t>(blockIdx.x) * kTile + ty;  // key this thread loads
  const T* qh = q + bh * s.n_q * s.d;
  const T* kh = k + kv_head * s.n_kv * s.d;
  float dot = 0.f;
  for (int64_t c0 = 0; c0 < s.d; c0 += kTile) {
    qs[ty][tx] = i < s.n_q ? ToF(qh[i * s.d + c0 + tx]) : 0.f;
    ks[ty][tx] = jl < s.n_kv ? ToF(kh[jl * s.d + c0 + tx]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kTile; ++c) dot += qs[ty][c] * ks[tx][c];
    __syncthreads();
  }
  if (i >= s.n_q || j >= s.n_kv) return;
  const bool visible = !s.causal || j <= i + s.n_kv - s.n_q;
  sc[(bh * s.n_q + i) * s.n_kv + j] = visible ? dot * scale : -INFINITY;
}

__device__ __forceinline__ float BlockReduce(float v, bool is_max, float* scratch) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();  // scratch is free (its previous use is read)
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) v = is_max ? fmaxf(v, scratch[w]) : v + scratch[w];
  return v;
}

// One block per row of S: P = exp(S - max) / sum in place, lse = max + log(sum).
__global__ void __launch_bounds__(kSoftmaxThreads) NaiveSoftmax(float* __restrict__ sc, float* __restrict__ lse, int64_t n_kv) {
  __shared__ float scratch[kSoftmaxThreads / 32];
  float* row = sc + static_cast<int64_t>(blockIdx.x) * n_kv;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n_kv; j += kSoftmaxThreads) m = fmaxf(m, row[j]);
  m = BlockReduce(m, true, scratch);
  float l = 0.f;
  for (int64_t j = threadIdx.x; j < n_kv; j += kSoftmaxThreads) l += expf(row[j] - m);
  l = BlockReduce(l, false, scratch);
  const float inv = 1.f / l;
  for (int64_t j = threadIdx.x; j < n_kv; j += kSoftmaxThreads) row[j] = expf(row[j] - m) * inv;
  if (threadIdx.x == 0) lse[blockIdx.x] = m + logf(l);
}

// Block (16, 16), grid (d tiles, N_q tiles, B*H): O[bh][i][c] = sum_j P[bh][i][j] v_j[c].
template <typename T>
__global__ void __launch_bounds__(kTile* kTile)
    NaivePv(const float* __restrict__ pm, const T* __restrict__ v, T* __restrict__ o, AttentionShape s) {
  __shared__ float ps[kTile][kTile + 1];
  __shared__ float vs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t bh = blockIdx.z;
  const int64_t kv_head = (bh / s.h) * s.h_kv + (bh % s.h) / (s.h / s.h_kv);
  const int64_t i = static_cast<int64_t>(blockIdx.y) * kTile + ty;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTile + tx;
  const float* prow = pm + bh * s.n_q * s.n_kv;
  const T* vh = v + kv_head * s.n_kv * s.d;
  float acc = 0.f;
  for (int64_t j0 = 0; j0 < s.n_kv; j0 += kTile) {
    ps[ty][tx] = i < s.n_q && j0 + tx < s.n_kv ? prow[i * s.n_kv + j0 + tx] : 0.f;
    vs[ty][tx] = j0 + ty < s.n_kv ? ToF(vh[(j0 + ty) * s.d + c]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int jj = 0; jj < kTile; ++jj) acc += ps[ty][jj] * vs[jj][tx];
    __syncthreads();
  }
  if (i < s.n_q) o[(bh * s.n_q + i) * s.d + c] = FromF<T>(acc);
}

double WorkspaceBytes(const AttentionShape& s) {
  return static_cast<double>(s.b * s.h) * static_cast<double>(s.n_q) * static_cast<double>(s.n_kv) * 4;
}

int RunNaive(const Problem& p, std::span<const Tensor> t, void* stream) {
  const AttnArgs a = ArgsOf(p, t);
  const AttentionShape& s = a.s;
  const cudaStream_t st = cuda::AsStream(stream);
  void* ws = nullptr;
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kAttentionScores, static_cast<size_t>(WorkspaceBytes(s)), st, &ws));
  float* sc = static_cast<float*>(ws);
  const dim3 block(kTile, kTile);
  const unsigned bh = static_cast<unsigned>(s.b * s.h);
  return DispatchHalf(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    NaiveScores<T><<<dim3(static_cast<unsigned>(cuda::CeilDiv(s.n_kv, kTile)), static_cast<unsigned>(cuda::CeilDiv(s.n_q, kTile)), bh),
                     block, 0, st>>>(static_cast<const T*>(a.q), static_cast<const T*>(a.k), sc, s, static_cast<float>(s.scale));
    KB_LAUNCH_CHECK();
    NaiveSoftmax<<<static_cast<unsigned>(s.b * s.h * s.n_q), kSoftmaxThreads, 0, st>>>(sc, a.lse, s.n_kv);
    KB_LAUNCH_CHECK();
    NaivePv<T><<<dim3(static_cast<unsigned>(s.d / kTile), static_cast<unsigned>(cuda::CeilDiv(s.n_q, kTile)), bh), block, 0, st>>>(
        sc, static_cast<const T*>(a.v), static_cast<T*>(a.o), s);
    KB_LAUNCH_CHECK();
    return 0;
  });
}

std::string SkipNaive(const Problem& p) {
  const AttentionShape s = ShapeOf(p);
  if (std::string why = SizeSkip(s); !why.empty()) return why;
  if (cuda::CeilDiv(s.n_q, kTile) > 65535) return "N_q = " + std::to_string(s.n_q) + " needs more than 65535 row tiles (gridDim.y)";
  if (WorkspaceBytes(s) > kMaxWorkspaceBytes)
    return "the score matrix would need " + std::to_string(static_cast<int64_t>(WorkspaceBytes(s) / (1ull << 30))) +
           " GiB of workspace (limit 48)";
  return "";
}

std::vector<LaunchInfo> LaunchesNaive(const Problem& p) {
  const bool f16 = p.dtype == Dtype::kF16;
  return {{"NaiveScores", f16 ? (const void*)&NaiveScores<__half> : (const void*)&NaiveScores<__nv_bfloat16>, kTile * kTile, 0},
          {"NaiveSoftmax", (const void*)&NaiveSoftmax, kSoftmaxThreads, 0},
          {"NaivePv", f16 ? (const void*)&NaivePv<__half> : (const void*)&NaivePv<__nv_bfloat16>, kTile * kTile, 0}};
}

}  // namespace

void AddAttentionNaiveVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_naive",
      .description = "Three kernels: S = QK^T to global memory, a softmax kernel, then P V (N^2 traffic).",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16, Dtype::kF16},
      .skip_reason = SkipNaive,
      .run_cuda = RunNaive,
      .launches = LaunchesNaive,
  });
}

}  // namespace kbench::kernels::attention
