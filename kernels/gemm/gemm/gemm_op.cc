// gemm: C[M,N] = A[M,K] * B[K,N], row-major, fp32 accumulation. The compute-bound yardstick: 2MNK
// FLOPs on (MK + KN + MN) elements, intensity ~M/3 FLOP/element for square shapes, so large shapes
// are judged by FLOP/s and decode shapes (M <= 64) by the bandwidth of reading B.
//
// Beside this file: the reference (gemm_ref.cc), the CPU rungs (gemm_cpu.cc) and the CUDA ladder
// (gemm_simt.cu, gemm_gemv.cu, gemm_tensorcore.cu, gemm_wgmma.cu and the cuBLAS baselines in
// gemm_cublas.cu, each header saying what its rungs teach; gemm_reference.cu registers them in ladder
// order). MakeGemmOp below assembles them.
#include "gemm/gemm/gemm.h"

#include <algorithm>
#include <cmath>

#include "core/triton_rung.h"
#include "gemm/gemm/gemm_ref.h"

namespace kbench::kernels {
#ifdef KBENCH_HAVE_CUDA
namespace embedded {
extern const char gemm_triton_py[];  // gemm_triton.py beside this file (kernels/CMakeLists.txt)
}  // namespace embedded
#endif
namespace {

// Tolerances of C = A*B with inputs in [-1, 1] (the init range below) and fp32 accumulation.
// A dot product of K such inputs has typical size s(K) = sqrt(K)/3 (each product has standard
// deviation 1/3), and its rounding error scales with s(K), not with |C|: an element that cancels to
// near zero still carries the error of summing terms of size s(K), so a purely relative check fails
// correct kernels there. The atol is that error bound, taken at the problem's K.
Tolerance GemmTolerance(Dtype d, double k) {
  const double s = std::sqrt(std::max(k, 1.0)) / 3;
  if (d == Dtype::kBF16) {
    // rtol covers the final rounding of C to bf16 (half an ulp, 2^-9). atol: one bf16 ulp (2^-8) of
    // s(K), what a kernel that stages partial sums in bf16 (split-K, stream-K) may lose on an element
    // that cancels to near zero (0.083 at K = 4096).
    return {.rtol = 1.6e-2, .atol = 0x1p-8 * s};
  }
  // f32: accumulation order (blocked, split-K, FMA or not) moves a sum of K products by ~u*sqrt(K)
  // per unit of s(K) (u = 2^-24; random-walk rounding over K partial sums of size ~s(K)): relative
  // ~5e-6 at K = 8192, so rtol 1e-4 leaves room for the worst of 10^8 elements. atol = 8*u*sqrt(K)*s(K)
  // = 8*u*K/3 (6.5e-4 at K = 4096), the same bound in absolute terms for elements near zero; a plain
  // sequential fp32 loop stays ~4x inside it at K = 8192.
  return {.rtol = 1e-4, .atol = 8 * 0x1p-24 * std::sqrt(std::max(k, 1.0)) * s};
}

// Without a problem (catalogs, checks that only know the dtype): K = 16384, twice the largest K of
// the presets, so the check is loose rather than wrong for any preset.
constexpr double kDefaultToleranceK = 16384;

}  // namespace

OpDef GemmDefinition() {
  OpDef op;
  op.name = "gemm";
  op.description =
      "C[M,N] = A[M,K] * B[K,N], all row-major and in the dtype, accumulated in fp32 (no alpha/beta: C is "
      "overwritten). Inputs in [-1, 1]. Cost: A, B and C once, (MK + KN + MN) elements; 2MNK FLOPs.";
  op.dims = {"M", "N", "K"};
  op.zero_dims = {"M"};  // the edge preset's empty problems
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {
      {.name = "A", .dims = {"M", "K"}},
      {.name = "B", .dims = {"K", "N"}},
      {.name = "C", .dims = {"M", "N"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double m = static_cast<double>(p.dim("M")), n = static_cast<double>(p.dim("N")),
                 k = static_cast<double>(p.dim("K"));
    return Cost{.bytes_read = (m * k + k * n) * DtypeBytes(p.dtype),
                .bytes_written = m * n * DtypeBytes(p.dtype),
                .flops = 2 * m * n * k,
                // f32 GEMM runs on the FMA pipes; bf16/f16 on the tensor cores.
                .unit = p.dtype == Dtype::kF32 ? ComputeUnit::kFp32Fma : ComputeUnit::kTensorCore};
  };
  op.reference = GemmReference;
  op.tolerance = [](Dtype d) { return GemmTolerance(d, kDefaultToleranceK); };
  op.problem_tolerance = [](const Problem& p) { return GemmTolerance(p.dtype, static_cast<double>(p.dim("K"))); };
  op.validate = [](const Problem& p) -> std::string {
    return p.dim("M") < 0 || p.dim("N") < 0 || p.dim("K") < 0 ? "M, N and K must be >= 0" : "";
  };
  const auto mnk = [&op](int64_t m, int64_t n, int64_t k) { return MakeProblem(op, {m, n, k}); };
  Preset decode{"decode", {}};
  for (int64_t m : {1, 16, 64})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}})
      decode.problems.push_back(mnk(m, n, k));
  op.presets = {
      {"small", {mnk(128, 128, 128)}},  // a few ms for cpu_naive on one core
      {"canonical", {mnk(4096, 4096, 4096), mnk(8192, 8192, 8192)}},
      // The PR gate's production shapes (kbench-client compare's default): a 4096^3 GEMM and the
      // GEMV of decoding one token through a 14336x4096 projection.
      {"ci", {mnk(4096, 4096, 4096), mnk(1, 14336, 4096)}},
      // 769 rows and N, K off every tile size (64, 16, 8); a GEMV-like row; the degenerate shapes.
      {"edge", {mnk(0, 64, 64), mnk(1, 1, 1), mnk(7, 5, 3), mnk(769, 321, 131), mnk(1, 4099, 257)}},
      std::move(decode),
  };
  return op;
}

OpDef MakeGemmOp() {
  OpDef op = GemmDefinition();
  AddGemmCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddGemmCudaVariants(op);
  AddTritonRung(op, {.name = "triton_gemm",
                     .description = "Triton: tiled tl.dot on the tensor cores, grouped tile order, autotuned configs",
                     .source = embedded::gemm_triton_py,
                     .dtypes = {Dtype::kBF16}});
#endif
  return op;
}

}  // namespace kbench::kernels
