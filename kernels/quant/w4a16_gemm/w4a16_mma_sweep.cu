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

namespace kbench::kernels::w4a16 {
namespace {

using bf16 = __nv_bfloat16;

template <typename S, int NTMAX>
void AddShape(OpDef& op, const char* name) {
  Variant v{
      .name = name,
      .description = "temporary: a shape of the tensor-core GEMV template",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 80,
  };
  v.skip_reason = [](const Problem& p) -> std::string {
    if (p.dim("M") > 8 * NTMAX) return "M > " + std::to_string(8 * NTMAX);
    return "";
  };
  v.run_cuda = [](const Problem& p, std::span<const Tensor> t, void* stream) -> int {
    const W4Args g = ArgsOf(p, t);
    const cudaStream_t s = cuda::AsStream(stream);
    int rc = 0;
    if (HandleDegenerate(g, s, &rc)) return rc;
    if (!S::Takes(g.a, g.w, g.scales, g.zeros, g.k))
      return g.m <= 8 ? LaunchW4GemvMagic(g, s) : g.m <= 16 ? LaunchW4GemvDequant(g, s) : LaunchW4DequantThenGemm(g, s);
    S::Launch(s, static_cast<const bf16*>(g.a), g.w, static_cast<const bf16*>(g.scales),
              static_cast<const bf16*>(g.zeros), static_cast<bf16*>(g.c), g.m, g.n, g.k);
    KB_LAUNCH_CHECK();
    return 0;
  };
  v.launches = [](const Problem& p) -> std::vector<LaunchInfo> {
    return {{"GemvMmaT", S::KernelFor(p.dim("M")), S::kThreads, 0}};
  };
  op.variants.push_back(std::move(v));
}

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

}  // namespace

void AddW4a16MmaSweepVariants(OpDef& op) {
  AddBulk<4, 4, 8>(op, "tmp_bulk_c4r4");
  AddBulk<8, 2, 8>(op, "tmp_bulk_c8r2");
  //                      NTMAX MT SPLIT WN D PIPE MINB PF ROLL
  AddShape<GemvMmaShape<2, 1, 4, 1, 8, false, 2>, 2>(op, "tmp_mma_s4_d8");
  AddShape<GemvMmaShape<2, 1, 4, 1, 4, true, 2>, 2>(op, "tmp_mma_s4_d4p");
  AddShape<GemvMmaShape<2, 1, 8, 1, 4, false, 1>, 2>(op, "tmp_mma_s8_d4");
  AddShape<GemvMmaShape<2, 1, 1, 1, 4, true, 1>, 2>(op, "tmp_mma_s1_d4p");
  AddShape<GemvMmaShape<2, 1, 1, 1, 8, true, 1>, 2>(op, "tmp_mma_s1_d8p");
  AddShape<GemvMmaShape<2, 1, 2, 1, 4, true, 1>, 2>(op, "tmp_mma_s2_d4p");
  AddShape<GemvMmaShape<2, 1, 1, 4, 4, true, 1>, 2>(op, "tmp_mma_w4_d4p");
  AddShape<GemvMmaShape<2, 1, 2, 2, 4, true, 1>, 2>(op, "tmp_mma_s2w2_d4p");
  AddShape<GemvMmaShape<2, 2, 1, 1, 2, true, 1>, 2>(op, "tmp_mma_m2s1_d2p");
  AddShape<GemvMmaShape<2, 2, 2, 1, 4, false, 1>, 2>(op, "tmp_mma_m2s2_d4");
  AddShape<GemvMmaShape<2, 2, 1, 4, 2, true, 1>, 2>(op, "tmp_mma_m2w4_d2p");
  AddShape<GemvMmaShape<2, 1, 4, 1, 4, true, 2, 1>, 2>(op, "tmp_mma_s4_d4p_pf");
  AddShape<GemvMmaShape<2, 1, 1, 1, 4, true, 1, 1>, 2>(op, "tmp_mma_s1_d4p_pf");
  AddShape<GemvMmaShape<2, 1, 4, 1, 4, true, 3, 0, true>, 2>(op, "tmp_mma_s4_d4p_r");
  AddShape<GemvMmaShape<2, 1, 2, 1, 4, true, 4, 0, true>, 2>(op, "tmp_mma_s2_d4p_r");
  AddShape<GemvMmaShape<2, 1, 1, 1, 8, true, 1, 0, true>, 2>(op, "tmp_mma_s1_d8p_r");
  AddShape<GemvMmaShape<2, 2, 1, 4, 2, true, 1, 0, true>, 2>(op, "tmp_mma_m2w4_d2p_r");
  AddShape<GemvMmaShape<8, 1, 4, 1, 2, true, 1>, 8>(op, "tmp_mma8_s4_d2p");
  AddShape<GemvMmaShape<8, 1, 1, 4, 2, true, 1>, 8>(op, "tmp_mma8_w4_d2p");
  AddShape<GemvMmaShape<8, 2, 2, 2, 2, false, 1>, 8>(op, "tmp_mma8_m2s2w2_d2");
  AddShape<GemvMmaShape<8, 1, 8, 1, 2, false, 1>, 8>(op, "tmp_mma8_s8_d2");
}

}  // namespace kbench::kernels::w4a16
