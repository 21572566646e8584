// rmsnorm_fp8_quant on CUDA: y = x / sqrt(mean(x^2) + 1e-6) * weight, then per-token FP8 E4M3 of y.
// bf16 in, 1-byte q and a float scale a row out: 3 B an element at the fused minimum.
//
// Rungs:
//   cuda_v1_unfused     two kernels, as a framework runs them: rmsnorm (the rmsnorm ladder's
//                       block-per-row kernel, reduction/rmsnorm/rmsnorm_rows.cuh) writes y in bf16 to
//                       the variant's workspace, then the per-token quantization
//                       (quant/common/quant_rows.cuh) reads it back: 7 B an element instead of 3, and
//                       y rounded to bf16 before its max is taken.
//   cuda_v2_fused       one kernel, a block per row, the row in registers: sum of squares, block sum,
//                       y = x * rstd * w kept in the same registers, its max, block max, then 8-byte
//                       E4M3 stores. y never leaves the SM and is never rounded to bf16. Rows too wide
//                       for registers re-read x (from L1/L2); odd widths and unaligned pointers take
//                       scalar paths.
//   cuda_v3_fused_ring  v2's pass with resident blocks walking rows through a cp.async shared-memory
//                       ring (core/cuda/row_pipeline.cuh, as rmsnorm's v7), the weight loaded once a
//                       kernel and kept in registers, and one barrier a row: rstd > 0 is the same
//                       for the whole row, so max|y| = rstd * max|x * w|, and the sum of squares and
//                       max|x * w| are reduced together (a float2 a warp). On the H200 that took 4% off
//                       8192x4096 against a reduction each (two barriers: 32.2 against 33.5 us) and 1%
//                       off 32768x4096. x * w stays in registers from the first pass to the stores
//                       (q = x * w * (rstd * inv), one multiply an element), where re-widening the row
//                       and the weight cost 128 of the kernel's 752 instructions: 6% off 8192x4096 and
//                       2-3% off 32768x4096. The weight is widened to floats once a kernel and kept
//                       (64 floats a thread with x * w: 96 registers, 5 blocks of 128 an SM instead
//                       of 6), where re-widening its raw packs each row cost 32 of the row loop's 361
//                       instructions: 0.4% off 32768x4096 and 1-3% off 8192x4096 on the H200; with 6
//                       blocks (80 registers, a spill) it was 1-5% slower. Rows that do not fit 4
//                       packs a thread run v2.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/row_pipeline.cuh"
#include "core/cuda/rows.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "core/cuda/workspace.cuh"
#include "quant/common/fp8.cuh"
#include "quant/common/quant_rows.cuh"
#include "quant/rmsnorm_fp8_quant/rmsnorm_fp8_quant.h"
#include "reduction/rmsnorm/rmsnorm_ref.h"
#include "reduction/rmsnorm/rmsnorm_rows.cuh"

namespace kbench::kernels {
namespace {

using bf16 = __nv_bfloat16;
constexpr float kEps = static_cast<float>(kRmsnormEps);

struct Args {
  const bf16* x;
  const bf16* w;
  uint8_t* q;
  float* scales;
  int64_t rows, cols;
};

bool VecOk(const Args& a) {
  return a.cols % 8 == 0 && cuda::Aligned16(a.x) && cuda::Aligned16(a.w) && quant::Aligned8(a.q);
}

// --- v1: rmsnorm into a bf16 workspace, then quantize it -----------------------------------------
int LaunchV1(const Args& a, cudaStream_t s) {
  void* ws = nullptr;
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kQuantIntermediate,
                                 static_cast<size_t>(a.rows * a.cols) * sizeof(bf16), s, &ws));
  bf16* y = static_cast<bf16*>(ws);
  if (const int e = cuda::LaunchRmsnormRows<bf16, false>(a.x, nullptr, a.w, y, nullptr, a.rows, a.cols, kEps, s))
    return e;
  return quant::LaunchQuantRows({.x = y, .scale = nullptr, .q = a.q, .scales = a.scales, .rows = a.rows,
                                 .cols = a.cols, .is_static = false},
                                s);
}

// --- v2: fused, block per row ---------------------------------------------------------------------
template <int kW, int kPacks>
__global__ void __launch_bounds__(cuda::kRowBlock)
    RmsnormQuantRow(const bf16* __restrict__ x, const bf16* __restrict__ w, uint8_t* __restrict__ q,
                    float* __restrict__ scales, int64_t cols) {
  const int64_t r = blockIdx.x;
  const bf16* xr = x + r * cols;
  uint8_t* qr = q + r * cols;
  float sum_sq = 0.0f, m = 0.0f;
  if constexpr (kPacks > 0) {
    const int packs = static_cast<int>(cols / kW);  // <= kPacks * blockDim.x (the plan)
    float v[kPacks][kW];
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) {
        cuda::LoadFloats<bf16, kW>(xr + static_cast<int64_t>(p) * kW, v[j]);
#pragma unroll
        for (int k = 0; k < kW; ++k) sum_sq += v[j][k] * v[j][k];
      }
    }
    const float rstd = rsqrtf(cuda::BlockSum(sum_sq) / static_cast<float>(cols) + kEps);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) {
        float wv[kW];
        cuda::LoadFloats<bf16, kW>(w + static_cast<int64_t>(p) * kW, wv);
#pragma unroll
        for (int k = 0; k < kW; ++k) v[j][k] = v[j][k] * rstd * wv[k];
        m = fmaxf(m, quant::AbsMax(v[j]));
      }
    }
    m = cuda::BlockMax(m);
    const float inv = quant::InvScaleOf(m);
    if (threadIdx.x == 0) scales[r] = quant::ScaleOf(m);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) quant::StoreQ<kW>(qr + static_cast<int64_t>(p) * kW, v[j], inv);
    }
  } else {
    // Row too wide for registers: three passes, the later two mostly from L1/L2.
    const int64_t packs = cols / kW;
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      cuda::LoadFloats<bf16, kW>(xr + p * kW, v);
#pragma unroll
      for (int k = 0; k < kW; ++k) sum_sq += v[k] * v[k];
    }
    const float rstd = rsqrtf(cuda::BlockSum(sum_sq) / static_cast<float>(cols) + kEps);
    const auto y_of = [&](int64_t p, float (&v)[kW]) {
      float wv[kW];
      cuda::LoadFloats<bf16, kW>(xr + p * kW, v);
      cuda::LoadFloats<bf16, kW>(w + p * kW, wv);
#pragma unroll
      for (int k = 0; k < kW; ++k) v[k] = v[k] * rstd * wv[k];
    };
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      y_of(p, v);
      m = fmaxf(m, quant::AbsMax(v));
    }
    m = cuda::BlockMax(m);
    const float inv = quant::InvScaleOf(m);
    if (threadIdx.x == 0) scales[r] = quant::ScaleOf(m);
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float v[kW];
      y_of(p, v);
      quant::StoreQ<kW>(qr + p * kW, v, inv);
    }
  }
}

using RowFn = void (*)(const bf16*, const bf16*, uint8_t*, float*, int64_t);

struct RowPick {
  RowFn kernel = nullptr;
  cuda::RowPlan plan;
  std::string name;
};

RowPick PickRow(int64_t cols, bool vec_ok) {
  RowPick l;
  l.plan = cuda::PlanRow(cols, 8, vec_ok);
  if (l.plan.width == 1) {
    l.kernel = cuda::PickPacks<cuda::kRowCacheFloats>(
        l.plan.packs, [](auto k) -> RowFn { return &RmsnormQuantRow<1, decltype(k)::value>; });
  } else {
    l.kernel = cuda::PickPacks<cuda::kRowCacheFloats / 8>(
        l.plan.packs, [](auto k) -> RowFn { return &RmsnormQuantRow<8, decltype(k)::value>; });
  }
  l.name = "RmsnormQuantRow<w" + std::to_string(l.plan.width) +
           (l.plan.packs ? ",regs" + std::to_string(l.plan.packs) : ",loop") + ">";
  return l;
}

int LaunchV2(const Args& a, cudaStream_t s) {
  const RowPick l = PickRow(a.cols, VecOk(a));
  l.kernel<<<static_cast<unsigned>(a.rows), l.plan.threads, 0, s>>>(a.x, a.w, a.q, a.scales, a.cols);
  KB_LAUNCH_CHECK();
  return 0;
}

// --- v3: fused, resident blocks, cp.async ring -----------------------------------------------------
// Blocks an SM the fixed-geometry ring is compiled to fit: the ring's count (cuda::FixedMinBlocks) or
// fewer, so that each thread has the 96 registers its 64 kept floats need without a spill.
template <int kThreads, int kStages>
constexpr int RingMinBlocks() {
  constexpr int kRegs = 96;
  return kThreads == 0 ? 0 : std::min(cuda::FixedMinBlocks<kThreads, kStages>(), 65536 / (kThreads * kRegs));
}

template <int kPacks, int kStages, int kThreads>
__global__ void __launch_bounds__(kThreads ? kThreads : 256, RingMinBlocks<kThreads, kStages>())
    RmsnormQuantRing(const bf16* __restrict__ x, const bf16* __restrict__ w, uint8_t* __restrict__ q,
                     float* __restrict__ scales, int64_t rows, int64_t any_cols) {
  constexpr int kW = 8;
  const int64_t cols = cuda::RowCols<kPacks, kThreads, kW>(any_cols);
  const int packs = static_cast<int>(cols / kW);
  float wf[kPacks][kW];  // the same for every row: widened once
  {
    uint4 w_raw[kPacks];
    cuda::LoadRawPacks<kPacks>(w, packs, w_raw);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      cuda::WidenPack<bf16>(w_raw[j], wf[j]);
#pragma unroll
      for (int k = 0; k < kW; ++k) asm volatile("" : "+f"(wf[j][k]));  // else re-widened in the loop
    }
  }
  __shared__ cuda::WarpPartials<float2, 8> partials;  // blocks of at most 256 threads
  unsigned parity = 0;
  cuda::ForEachRowStaged<bf16, kPacks, kStages>(x, rows, cols, packs, [&](int64_t r, const uint4(&row)[kPacks]) {
    float sum_sq = 0.0f, mxw = 0.0f;  // sum of x^2, max |x * w|
    float xw[kPacks][kW];              // x * w, kept for the stores in place of the raw row
    cuda::ForEachPackSlot<bf16>(row, packs, [&](int j, int, const float(&v)[kW]) {
      float sq[kW];
#pragma unroll
      for (int k = 0; k < kW; ++k) sq[k] = v[k] * v[k], xw[j][k] = v[k] * wf[j][k];
#pragma unroll
      for (int k = 0; k < kW; ++k) asm volatile("" : "+f"(xw[j][k]));  // kept, not recomputed for the stores
      sum_sq += cuda::PackReduce<kW>(sq, [](float a, float b) { return a + b; });
      mxw = fmaxf(mxw, quant::AbsMax(xw[j]));
    });
    // One barrier for both: warp sums and maxima posted as pairs, every thread folds them.
    const float2* parts =
        cuda::PostWarpPartial(partials, parity++, make_float2(cuda::WarpSum(sum_sq), cuda::WarpMax(mxw)));
    float2 t = parts[0];
#pragma unroll
    for (int wp = 1; wp < 8; ++wp)
      if (wp < static_cast<int>(blockDim.x >> 5)) t.x += parts[wp].x, t.y = fmaxf(t.y, parts[wp].y);
    const float rstd = rsqrtf(t.x / static_cast<float>(cols) + kEps);
    const float m = t.y * rstd;  // max |y|
    if (threadIdx.x == 0) scales[r] = quant::ScaleOf(m);
    const float f = rstd * quant::InvScaleOf(m);  // q = y * inv = (x * w) * f (the header says why)
    uint8_t* qr = q + r * cols;
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) quant::StoreFp8x8(qr + static_cast<int64_t>(p) * kW, quant::ToFp8x8(xw[j], f));
    }
  });
}

using RingFn = void (*)(const bf16*, const bf16*, uint8_t*, float*, int64_t, int64_t);

RingFn PickRing(int64_t cols, bool vec_ok, int* threads, int* packs) {
  return cuda::PickPipelined(cols, 8, vec_ok, threads, packs, [](auto kPacks, auto kThreads) -> RingFn {
    return &RmsnormQuantRing<kPacks, cuda::kRingStages, kThreads>;
  });
}

int LaunchV3(const Args& a, cudaStream_t s) {
  int threads = 0, packs = 0;
  const RingFn k = PickRing(a.cols, VecOk(a), &threads, &packs);
  if (k == nullptr) return LaunchV2(a, s);
  return cuda::LaunchPipelined<cuda::kRingStages>(k, threads, packs, a.rows, s, a.x, a.w, a.q, a.scales, a.rows,
                                                  a.cols);
}

// --- registration ----------------------------------------------------------------------------------
template <int (*L)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{static_cast<const bf16*>(t[0].data), static_cast<const bf16*>(t[1].data),
               static_cast<uint8_t*>(t[2].data), static_cast<float*>(t[3].data), p.dim("rows"), p.dim("cols")};
  if (a.rows <= 0) return 0;  // nothing to write
  if (p.dtype != Dtype::kBF16) return static_cast<int>(cudaErrorInvalidValue);
  if (a.cols <= 0) return LaunchV2(a, cuda::AsStream(stream));  // empty rows: scales 0
  return L(a, cuda::AsStream(stream));
}

std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const int64_t cols = p.dim("cols");
  switch (rung) {
    case 1: {
      const auto l = cuda::PickRmsnormRow<bf16, false>(cols, true);
      return {{l.name, (const void*)l.kernel, l.plan.threads, 0}, quant::QuantRowsLaunch(cols, false)};
    }
    case 3: {
      int threads = 0, packs = 0;
      if (const RingFn k = PickRing(cols, true, &threads, &packs))
        return {{"RmsnormQuantRing<ring" + std::to_string(cuda::kRingStages) + ">", (const void*)k, threads,
                 cuda::RingBytes(cuda::kRingStages, packs, threads)}};
      return Launches(2, p);
    }
    default: {
      const RowPick l = PickRow(cols, true);
      return {{l.name, (const void*)l.kernel, l.plan.threads, 0}};
    }
  }
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return Launches(kRung, p);
}

std::string RowGridSkip(const Problem& p) {
  return p.dim("rows") > INT_MAX ? "rows over 2^31-1: one block per row exceeds gridDim.x" : "";
}

}  // namespace

void AddRmsnormFp8QuantCudaVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_unfused",
      .description = "rmsnorm kernel into a bf16 workspace, then the per-token quantize kernel.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV1>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_fused",
      .description = "One kernel, block per row: norm, max and quantize with the row in registers.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV2>,
      .launches = LaunchesOf<2>,
  });
  op.variants.push_back({
      .name = "cuda_v3_fused_ring",
      .description = "v2 with resident blocks and the next rows in a cp.async shared-memory ring.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV3>,
      .launches = LaunchesOf<3>,
  });
}

}  // namespace kbench::kernels
