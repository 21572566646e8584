// TEMPORARY (removed once measured): shapes of the tensor-core GEMV template (w4a16_mma_kernel.cuh)
// registered as extra variants tmp_mma_*, so that one GPU run times them all beside cuda_v4_mma_gemv
// and cuBLAS; the best becomes cuda_v4_mma_gemv's shape.
#include <cuda_bf16.h>

#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "quant/w4a16_gemm/w4a16_cuda.cuh"
#include "quant/w4a16_gemm/w4a16_gemm.h"
#include "quant/w4a16_gemm/w4a16_mma_bulk.cuh"
#include "quant/w4a16_gemm/w4a16_mma_kernel.cuh"
#include "quant/w4a16_gemm/w4a16_mma_ring.cuh"
#include "quant/w4a16_gemm/w4a16_mma_smem.cuh"

namespace kbench::kernels::w4a16 {
namespace {

using bf16 = __nv_bfloat16;
const bf16* A(const W4Args& g) { return static_cast<const bf16*>(g.a); }
const bf16* Sc(const W4Args& g) { return static_cast<const bf16*>(g.scales); }
const bf16* Z(const W4Args& g) { return static_cast<const bf16*>(g.zeros); }
bf16* C(const W4Args& g) { return static_cast<bf16*>(g.c); }

template <int NT, int C, int R, int CH>
int LaunchBulk(const W4Args& g, cudaStream_t s) {
  static int sms = 0;
  constexpr int kSmem = BulkSmemBytes<NT, C, R, CH>();
  const void* f = reinterpret_cast<const void*>(&GemvMmaBulk<NT, C, R, CH>);
  static bool attr = false;
  if (!attr) {
    int dev = 0;
    KB_CUDA_TRY(cudaGetDevice(&dev));
    KB_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    KB_CUDA_TRY(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    attr = true;
  }
  GemvMmaBulk<NT, C, R, CH><<<sms, 32 * (C + 1), kSmem, s>>>(
      static_cast<const bf16*>(g.a), g.w, static_cast<const bf16*>(g.scales), static_cast<const bf16*>(g.zeros),
      static_cast<bf16*>(g.c), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

template <int C, int R, int CH>
void AddBulk(OpDef& op, const char* name) {
  Variant v{
      .name = name,
      .description = "temporary: bulk-copy-fed tensor-core GEMV",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 90,
  };
  v.skip_reason = [](const Problem& p) -> std::string { return p.dim("M") > 16 ? "M > 16" : ""; };
  v.run_cuda = [](const Problem& p, std::span<const Tensor> t, void* stream) -> int {
    const W4Args g = ArgsOf(p, t);
    const cudaStream_t s = cuda::AsStream(stream);
    int rc = 0;
    if (HandleDegenerate(g, s, &rc)) return rc;
    const auto al = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
    if (g.k % (kW4Group * CH) != 0 || !al(g.a) || !al(g.w) || !al(g.scales) || !al(g.zeros))
      return g.m <= 8 ? LaunchW4GemvMagic(g, s) : LaunchW4GemvDequant(g, s);
    return g.m <= 8 ? LaunchBulk<1, C, R, CH>(g, s) : LaunchBulk<2, C, R, CH>(g, s);
  };
  v.launches = [](const Problem& p) -> std::vector<LaunchInfo> {
    const void* f = p.dim("M") <= 8 ? (const void*)&GemvMmaBulk<1, C, R, CH> : (const void*)&GemvMmaBulk<2, C, R, CH>;
    return {{"GemvMmaBulk", f, 32 * (C + 1), BulkSmemBytes<2, C, R, CH>()}};
  };
  op.variants.push_back(std::move(v));
}

// D = 4 chunks a slab up to M = 16, 2 above (the slab of 64 rows of A is 32 KB).
template <int WN>
void AddSmemA(OpDef& op, const char* name) {
  Variant v{
      .name = name,
      .description = "temporary: tensor-core GEMV with A staged in shared memory",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
  };
  v.skip_reason = [](const Problem& p) -> std::string { return p.dim("M") > 64 ? "M > 64" : ""; };
  v.run_cuda = [](const Problem& p, std::span<const Tensor> t, void* stream) -> int {
    const W4Args g = ArgsOf(p, t);
    const cudaStream_t s = cuda::AsStream(stream);
    int rc = 0;
    if (HandleDegenerate(g, s, &rc)) return rc;
    const bool small = g.m <= 16;
    if (!(small ? GemvMmaShape<2, 1, 1, 1, 4, false, 1>::Takes(g.a, g.w, g.scales, g.zeros, g.k)
                : GemvMmaShape<2, 1, 1, 1, 2, false, 1>::Takes(g.a, g.w, g.scales, g.zeros, g.k)))
      return g.m <= 8 ? LaunchW4GemvMagic(g, s) : g.m <= 16 ? LaunchW4GemvDequant(g, s) : LaunchW4DequantThenGemm(g, s);
    if (g.m <= 8) return LaunchGemvMmaSmemA<1, WN, 4>(s, A(g), g.w, Sc(g), Z(g), C(g), g.m, g.n, g.k);
    if (g.m <= 16) return LaunchGemvMmaSmemA<2, WN, 4>(s, A(g), g.w, Sc(g), Z(g), C(g), g.m, g.n, g.k);
    if (g.m <= 32) return LaunchGemvMmaSmemA<4, WN, 2>(s, A(g), g.w, Sc(g), Z(g), C(g), g.m, g.n, g.k);
    return LaunchGemvMmaSmemA<8, WN, 2>(s, A(g), g.w, Sc(g), Z(g), C(g), g.m, g.n, g.k);
  };
  v.launches = [](const Problem& p) -> std::vector<LaunchInfo> {
    const int64_t m = p.dim("M");
    const void* f = m <= 8    ? (const void*)&GemvMmaSmemA<1, WN, 4, 1>
                    : m <= 16 ? (const void*)&GemvMmaSmemA<2, WN, 4, 1>
                    : m <= 32 ? (const void*)&GemvMmaSmemA<4, WN, 2, 1>
                              : (const void*)&GemvMmaSmemA<8, WN, 2, 1>;
    const int64_t smem = m <= 8    ? 2 * SmemASlabBytes<1, 4>()
                         : m <= 16 ? 2 * SmemASlabBytes<2, 4>()
                         : m <= 32 ? 2 * SmemASlabBytes<4, 2>()
                                   : 2 * SmemASlabBytes<8, 2>();
    return {{"GemvMmaSmemA", f, 32 * WN, smem}};
  };
  op.variants.push_back(std::move(v));
}

template <int NT, int D, int S, int WN>
int LaunchRing(const W4Args& g, cudaStream_t s) {
  constexpr int kSmem = RingSmemBytes<D, S, WN>();
  const void* f = reinterpret_cast<const void*>(&GemvMmaRing<NT, D, S, WN>);
  static const cudaError_t attr = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (attr != cudaSuccess) return static_cast<int>(attr);
  GemvMmaRing<NT, D, S, WN><<<static_cast<unsigned>(cuda::CeilDiv(g.n, 16 * WN)), 32 * WN, kSmem, s>>>(
      A(g), g.w, Sc(g), Z(g), C(g), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

template <int D, int S, int WN>
void AddRing(OpDef& op, const char* name) {
  Variant v{
      .name = name,
      .description = "temporary: tensor-core GEMV, each warp's weights through a private cp.async ring",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
  };
  v.skip_reason = [](const Problem& p) -> std::string { return p.dim("M") > 16 ? "M > 16" : ""; };
  v.run_cuda = [](const Problem& p, std::span<const Tensor> t, void* stream) -> int {
    const W4Args g = ArgsOf(p, t);
    const cudaStream_t s = cuda::AsStream(stream);
    int rc = 0;
    if (HandleDegenerate(g, s, &rc)) return rc;
    const auto al = [](const void* q, uintptr_t b) { return reinterpret_cast<uintptr_t>(q) % b == 0; };
    if (g.k % (kW4Group * D) != 0 || !al(g.a, 16) || !al(g.w, 16) || !al(g.scales, 8) || !al(g.zeros, 8))
      return g.m <= 8 ? LaunchW4GemvMagic(g, s) : LaunchW4GemvDequant(g, s);
    return g.m <= 8 ? LaunchRing<1, D, S, WN>(g, s) : LaunchRing<2, D, S, WN>(g, s);
  };
  v.launches = [](const Problem& p) -> std::vector<LaunchInfo> {
    const void* f = p.dim("M") <= 8 ? (const void*)&GemvMmaRing<1, D, S, WN> : (const void*)&GemvMmaRing<2, D, S, WN>;
    return {{"GemvMmaRing", f, 32 * WN, RingSmemBytes<D, S, WN>()}};
  };
  op.variants.push_back(std::move(v));
}

// Request 1's best shape at M = 16 (the template, 4 warps splitting K, 8-chunk batches at once).
void AddS4D8(OpDef& op) {
  using S = GemvMmaShape<2, 1, 4, 1, 8, false, 2>;
  Variant v{
      .name = "tmp_mma_s4_d8",
      .description = "temporary: the template with 4 warps splitting K and 8-chunk batches",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
  };
  v.skip_reason = [](const Problem& p) -> std::string { return p.dim("M") > 16 ? "M > 16" : ""; };
  v.run_cuda = [](const Problem& p, std::span<const Tensor> t, void* stream) -> int {
    const W4Args g = ArgsOf(p, t);
    const cudaStream_t s = cuda::AsStream(stream);
    int rc = 0;
    if (HandleDegenerate(g, s, &rc)) return rc;
    if (!S::Takes(g.a, g.w, g.scales, g.zeros, g.k)) return g.m <= 8 ? LaunchW4GemvMagic(g, s) : LaunchW4GemvDequant(g, s);
    S::Launch(s, A(g), g.w, Sc(g), Z(g), C(g), g.m, g.n, g.k);
    KB_LAUNCH_CHECK();
    return 0;
  };
  v.launches = [](const Problem& p) -> std::vector<LaunchInfo> {
    return {{"GemvMmaT", S::KernelFor(p.dim("M")), S::kThreads, 0}};
  };
  op.variants.push_back(std::move(v));
}

// v4's M <= 8 shape with L2's 256-byte prefetch hint on the weight loads.
void AddPrefetchShape(OpDef& op) {
  using S = GemvMmaShape<1, 1, 1, 4, 4, true, 1, 1>;
  Variant v{
      .name = "tmp_mma_w4_d4p_pf",
      .description = "temporary: v4's M <= 8 shape, weight loads with the L2::256B prefetch hint",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
  };
  v.skip_reason = [](const Problem& p) -> std::string { return p.dim("M") > 8 ? "M > 8" : ""; };
  v.run_cuda = [](const Problem& p, std::span<const Tensor> t, void* stream) -> int {
    const W4Args g = ArgsOf(p, t);
    const cudaStream_t s = cuda::AsStream(stream);
    int rc = 0;
    if (HandleDegenerate(g, s, &rc)) return rc;
    if (!S::Takes(g.a, g.w, g.scales, g.zeros, g.k)) return LaunchW4GemvMagic(g, s);
    S::Launch(s, A(g), g.w, Sc(g), Z(g), C(g), g.m, g.n, g.k);
    KB_LAUNCH_CHECK();
    return 0;
  };
  v.launches = [](const Problem&) -> std::vector<LaunchInfo> {
    return {{"GemvMmaT", S::Kernel<1>(), S::kThreads, 0}};
  };
  op.variants.push_back(std::move(v));
}

}  // namespace

void AddW4a16MmaSweepVariants(OpDef& op) {
  AddPrefetchShape(op);
  AddS4D8(op);
  AddRing<4, 4, 4>(op, "tmp_ring_d4s4w4");
  AddRing<4, 6, 2>(op, "tmp_ring_d4s6w2");
  AddRing<4, 8, 2>(op, "tmp_ring_d4s8w2");
  AddSmemA<4>(op, "tmp_smem_w4");
  AddBulk<4, 4, 8>(op, "tmp_bulk_c4r4");
  AddBulk<8, 2, 8>(op, "tmp_bulk_c8r2");
}

}  // namespace kbench::kernels::w4a16
