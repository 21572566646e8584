// The vendor baselines of the GEMM ladder: what the hand-written rungs are measured against.
//   cublas_sgemm   cublasSgemm, fp32 CUDA-core math (CUBLAS_DEFAULT_MATH: no TF32 unless the process
//                  sets NVIDIA_TF32_OVERRIDE=1, which the worker does not).
//   cublas_tf32    cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32: fp32 storage, inputs rounded to TF32
//                  (10-bit mantissa) on the tensor cores. Its error (~1e-3 relative per product) fails
//                  the f32 tolerance, so it runs under dtype tf32 and is registered only when the gemm
//                  op lists tf32 among its dtypes (with a tf32 tolerance).
//   cublas_bf16    cublasGemmEx, bf16 in/out, CUBLAS_COMPUTE_32F, with
//                  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION.
//   cublaslt_bf16  cublasLtMatmul with the heuristic's first algorithm for the shape and the tensors'
//                  actual alignment, and a 32 MiB workspace; the plan is cached per shape. Split-K
//                  reductions only in the compute type (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK).
// Both bf16 baselines accumulate as kbench's rungs do, in fp32 to the end: by default cuBLAS may add
// split-K partial sums in bf16 (PyTorch allows it too), which at 1000x1000x999 puts ~1000 elements
// outside the fp32-accumulation tolerance every rung is held to. A faster baseline that rounds
// partial sums would not be the same computation.
// Row-major C = A*B is column-major C^T = B^T * A^T: every call passes B first, with the dims swapped
// (m' = N, n' = M), so no transpose is executed.
//
// Handles and workspaces are created once per device on first use (so that first use must be
// outside stream capture: the worker's correctness run is) and never destroyed. Calls are serialized
// per device: a handle's stream and workspace are set for each call.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "gemm/gemm/gemm_cuda.cuh"

namespace kbench::kernels::gemm {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

// A cuBLAS status as the cudaError_t a run_cuda returns.
int ToCudaError(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return 0;
    case CUBLAS_STATUS_ALLOC_FAILED: return static_cast<int>(cudaErrorMemoryAllocation);
    case CUBLAS_STATUS_INVALID_VALUE: return static_cast<int>(cudaErrorInvalidValue);
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED: return static_cast<int>(cudaErrorNotSupported);
    case CUBLAS_STATUS_NOT_INITIALIZED: return static_cast<int>(cudaErrorInitializationError);
    case CUBLAS_STATUS_EXECUTION_FAILED: {
      const cudaError_t e = cudaGetLastError();
      return static_cast<int>(e != cudaSuccess ? e : cudaErrorLaunchFailure);
    }
    default: return static_cast<int>(cudaErrorUnknown);
  }
}

#define KB_CUBLAS_TRY(expr)                                  \
  do {                                                       \
    if (const cublasStatus_t kb_st_ = (expr); kb_st_ != CUBLAS_STATUS_SUCCESS) return ToCudaError(kb_st_); \
  } while (0)

struct LtPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // Lt's A = our B, Lt's B = our A
  cublasLtMatmulAlgo_t algo{};
};

struct DeviceBlas {
  std::mutex mu;  // one call at a time per device: stream and workspace are handle state
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;     // cublas calls
  void* lt_workspace = nullptr;  // cublasLt calls
  // (M, N, K, alignment of A, B, C) -> plan
  std::map<std::tuple<int64_t, int64_t, int64_t, uint32_t, uint32_t, uint32_t>, LtPlan> plans;
};

// The current device's handles, created on first use. Returns a cudaError_t as int.
int GetBlas(DeviceBlas** out) {
  static std::mutex mu;
  static auto* devices = new std::map<int, DeviceBlas*>();  // never destroyed (driver teardown order)
  int device = 0;
  KB_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = devices->find(device); it != devices->end()) {
    *out = it->second;
    return 0;
  }
  auto* d = new DeviceBlas();
  KB_CUBLAS_TRY(cublasCreate(&d->handle));
  KB_CUBLAS_TRY(cublasLtCreate(&d->lt));
  KB_CUDA_TRY(cudaMalloc(&d->workspace, kWorkspaceBytes));
  KB_CUDA_TRY(cudaMalloc(&d->lt_workspace, kWorkspaceBytes));
  (*devices)[device] = d;
  *out = d;
  return 0;
}

// Binds the handle to this call's stream. cublasSetStream resets the workspace to cuBLAS's own pool,
// so ours (allocated up front: nothing is allocated inside a captured graph) is set after it.
int Bind(DeviceBlas* d, cudaStream_t s, cublasMath_t math) {
  KB_CUBLAS_TRY(cublasSetStream(d->handle, s));
  KB_CUBLAS_TRY(cublasSetWorkspace(d->handle, d->workspace, kWorkspaceBytes));
  KB_CUBLAS_TRY(cublasSetMathMode(d->handle, math));
  return 0;
}

// Largest power of two (at most 256) dividing the address: what Lt may assume about a pointer.
uint32_t AlignmentOf(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a >>= 1;
  return a;
}

template <typename Call>
int WithBlas(const Problem& p, std::span<const Tensor> t, void* stream, Call&& call) {
  const GemmArgs g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  DeviceBlas* d = nullptr;
  if (const int e = GetBlas(&d); e != 0) return e;
  std::lock_guard<std::mutex> lock(d->mu);
  return call(g, s, d);
}

int RunSgemm(const Problem& p, std::span<const Tensor> t, void* stream) {
  return WithBlas(p, t, stream, [](const GemmArgs& g, cudaStream_t s, DeviceBlas* d) {
    if (const int e = Bind(d, s, CUBLAS_DEFAULT_MATH); e != 0) return e;
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
    KB_CUBLAS_TRY(cublasSgemm(d->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, static_cast<const float*>(g.b), n,
                              static_cast<const float*>(g.a), k, &beta, static_cast<float*>(g.c), n));
    return 0;
  });
}

int RunTf32(const Problem& p, std::span<const Tensor> t, void* stream) {
  return WithBlas(p, t, stream, [](const GemmArgs& g, cudaStream_t s, DeviceBlas* d) {
    if (const int e = Bind(d, s, CUBLAS_DEFAULT_MATH); e != 0) return e;  // the compute type asks for TF32
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
    KB_CUBLAS_TRY(cublasGemmEx(d->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, g.b, CUDA_R_32F, n, g.a, CUDA_R_32F, k,
                               &beta, g.c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    return 0;
  });
}

// Reduced-precision (bf16/f16) reductions of split-K partials are off: fp32 accumulation throughout.
constexpr cublasMath_t kStrictMath =
    static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
// Lt's split-K schemes that reduce in the compute type (fp32), besides none; not in place in the
// output or through an output-typed workspace, which round partial sums to bf16.
constexpr uint32_t kStrictReductionSchemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;

int RunBf16(const Problem& p, std::span<const Tensor> t, void* stream) {
  return WithBlas(p, t, stream, [](const GemmArgs& g, cudaStream_t s, DeviceBlas* d) {
    if (const int e = Bind(d, s, kStrictMath); e != 0) return e;
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
    KB_CUBLAS_TRY(cublasGemmEx(d->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, g.b, CUDA_R_16BF, n, g.a, CUDA_R_16BF,
                               k, &beta, g.c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return 0;
  });
}

// Builds the Lt plan of a shape and alignment: column-major C^T[N,M] = B^T[N,K] * A^T[K,M].
int MakeLtPlan(DeviceBlas* d, const GemmArgs& g, uint32_t align_a, uint32_t align_b, uint32_t align_c, LtPlan* plan) {
  KB_CUBLAS_TRY(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  KB_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_16BF, g.n, g.k, g.n));
  KB_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_16BF, g.k, g.m, g.k));
  KB_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_16BF, g.n, g.m, g.n));
  cublasLtMatmulPreference_t pref = nullptr;
  KB_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
  struct PrefGuard {
    cublasLtMatmulPreference_t p;
    ~PrefGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{pref};
  const uint64_t workspace = kWorkspaceBytes;
  KB_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                     sizeof(workspace)));
  const uint32_t schemes = kStrictReductionSchemes;
  KB_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                                     sizeof(schemes)));
  // Lt assumes 256-byte aligned pointers unless told otherwise; offset views would then be wrong.
  // Our A and B are Lt's B and A.
  KB_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b, sizeof(align_b)));
  KB_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a, sizeof(align_a)));
  KB_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof(align_c)));
  KB_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof(align_c)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  KB_CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(d->lt, plan->op, plan->a, plan->b, plan->c, plan->c, pref, 1, &result, &found));
  if (found == 0) return static_cast<int>(cudaErrorNotSupported);
  plan->algo = result.algo;
  return 0;
}

int RunLtBf16(const Problem& p, std::span<const Tensor> t, void* stream) {
  return WithBlas(p, t, stream, [](const GemmArgs& g, cudaStream_t s, DeviceBlas* d) {
    const uint32_t align_a = AlignmentOf(g.a), align_b = AlignmentOf(g.b), align_c = AlignmentOf(g.c);
    const auto key = std::make_tuple(g.m, g.n, g.k, align_a, align_b, align_c);
    auto it = d->plans.find(key);
    if (it == d->plans.end()) {
      LtPlan plan;
      if (const int e = MakeLtPlan(d, g, align_a, align_b, align_c, &plan); e != 0) return e;
      it = d->plans.emplace(key, plan).first;
    }
    const LtPlan& plan = it->second;
    const float alpha = 1.0f, beta = 0.0f;
    KB_CUBLAS_TRY(cublasLtMatmul(d->lt, plan.op, &alpha, g.b, plan.a, g.a, plan.b, &beta, g.c, plan.c, g.c, plan.c, &plan.algo,
                                 d->lt_workspace, kWorkspaceBytes, s));
    return 0;
  });
}

template <Dtype kDtype>
std::string SkipBlas(const Problem& p) {
  if (std::string why = DtypeSkip(p, {kDtype}); !why.empty()) return why;
  return Int32DimsSkip(p);  // the cublas<t>gemm / GemmEx dims are int
}

// cuBLAS chooses and launches its own kernels: there is no host stub of ours to describe.
std::vector<LaunchInfo> NoOwnKernels(const Problem&) { return {}; }

}  // namespace

void AddGemmCublasFp32Variants(OpDef& op) {
  op.variants.push_back({
      .name = "cublas_sgemm",
      .description = "cuBLAS SGEMM, fp32, no TF32.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32},
      .is_baseline = true,
      .skip_reason = SkipBlas<Dtype::kF32>,
      .run_cuda = RunSgemm,
      .launches = NoOwnKernels,
  });
  // TF32 rounds the inputs to a 10-bit mantissa: it can only pass a tf32 tolerance, so it exists only
  // where the op offers dtype tf32 (fp32 storage).
  bool op_has_tf32 = false;
  for (Dtype d : op.dtypes) op_has_tf32 |= d == Dtype::kTF32;
  if (op_has_tf32) {
    op.variants.push_back({
        .name = "cublas_tf32",
        .description = "cuBLAS GEMM with TF32 tensor-core math.",
        .backend = Backend::kCuda,
        .dtypes = {Dtype::kTF32},
        .min_compute_capability = 80,
        .is_baseline = true,
        .skip_reason = SkipBlas<Dtype::kTF32>,
        .run_cuda = RunTf32,
        .launches = NoOwnKernels,
    });
  }
}

void AddGemmCublasBf16Variants(OpDef& op) {
  op.variants.push_back({
      .name = "cublas_bf16",
      .description = "cuBLAS GemmEx, bf16, fp32 compute and fp32 split-K reductions.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .is_baseline = true,
      .skip_reason = SkipBlas<Dtype::kBF16>,
      .run_cuda = RunBf16,
      .launches = NoOwnKernels,
  });
  op.variants.push_back({
      .name = "cublaslt_bf16",
      .description = "cuBLASLt matmul, bf16, the heuristic's first algorithm with fp32 split-K reductions.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
      .is_baseline = true,
      .skip_reason = SkipBlas<Dtype::kBF16>,
      .run_cuda = RunLtBf16,
      .launches = NoOwnKernels,
  });
}

}  // namespace kbench::kernels::gemm
