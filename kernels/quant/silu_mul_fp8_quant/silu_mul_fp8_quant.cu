// silu_mul_fp8_quant on CUDA: h = silu(gate) * up, then per-token FP8 E4M3 of h. 4 B read and
// 1 B written an output element at the fused minimum.
//
// Rungs:
//   cuda_v1_unfused  two kernels, as a framework runs them: silu_and_mul's vectorized kernel
//                    (elementwise/silu_and_mul/silu_and_mul_kernel.cuh) writes h in bf16 to the
//                    variant's workspace, then the per-token quantization (quant/common/quant_rows.cuh)
//                    reads it back: 9 B an output element instead of 5, and h rounded to bf16 first.
//   cuda_v2_fused    one kernel, a block per row: each thread loads its 16-byte packs of gate and of
//                    up (all loads issued before any math), forms h in registers, block max, 8-byte
//                    E4M3 stores. h never leaves the SM. Blocks of up to 512 threads so that a
//                    14336-wide row is 4 packs a thread of each half (448 threads); rows wider than
//                    that, odd d and unaligned pointers re-read the row in a loop (mostly L1/L2).
//   cuda_v3_fused_ring v2's pass with resident blocks walking the [gate | up] rows through a cp.async
//                    shared-memory ring (core/cuda/row_pipeline.cuh): kRingStages rows a block in
//                    flight. A thread's up packs are its gate packs plus d/8 (the ring's geometry
//                    puts them in the thread's second half of slots); rows where it does not (d not
//                    4 packs of 128 or 256 threads a half, e.g. 14336) run v2.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/row_pipeline.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "core/cuda/workspace.cuh"
#include "elementwise/silu_and_mul/silu_and_mul_kernel.cuh"
#include "quant/common/fp8.cuh"
#include "quant/common/quant_rows.cuh"
#include "quant/silu_mul_fp8_quant/silu_mul_fp8_quant.h"

namespace kbench::kernels {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kMaxThreads = 512;
constexpr int kTargetPacks = 4;  // packs of each half a thread aims for (8 loads of 16 B in flight)

struct Args {
  const bf16* x;
  uint8_t* q;
  float* scales;
  int64_t rows, d;
};

// --- v1: silu_and_mul into a bf16 workspace, then quantize it --------------------------------------
int LaunchV1(const Args& a, cudaStream_t s) {
  void* ws = nullptr;
  KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kQuantIntermediate,
                                 static_cast<size_t>(a.rows * a.d) * sizeof(bf16), s, &ws));
  bf16* h = static_cast<bf16*>(ws);
  if (const int e = cuda::LaunchSiluAndMul(a.x, h, a.rows, a.d, true, s)) return e;
  return quant::LaunchQuantRows(
      {.x = h, .scale = nullptr, .q = a.q, .scales = a.scales, .rows = a.rows, .cols = a.d, .is_static = false}, s);
}

// --- v2: fused, block per row -------------------------------------------------------------------------
template <int kW, int kPacks>
__global__ void __launch_bounds__(kMaxThreads)
    SiluMulQuantRow(const bf16* __restrict__ x, uint8_t* __restrict__ q, float* __restrict__ scales, int64_t d) {
  const int64_t r = blockIdx.x;
  const bf16* xr = x + r * 2 * d;
  uint8_t* qr = q + r * d;
  float m = 0.0f;
  if constexpr (kPacks > 0) {
    static_assert(kW == 8, "the register path holds 16-byte packs");
    const int packs = static_cast<int>(d / kW);  // <= kPacks * blockDim.x (the plan)
    uint4 g_raw[kPacks], u_raw[kPacks];
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) {
        g_raw[j] = *reinterpret_cast<const uint4*>(xr + static_cast<int64_t>(p) * kW);
        u_raw[j] = *reinterpret_cast<const uint4*>(xr + d + static_cast<int64_t>(p) * kW);
      }
    }
    float h[kPacks][kW];
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) {
        float u[kW];
        cuda::WidenPack<bf16>(g_raw[j], h[j]);
        cuda::WidenPack<bf16>(u_raw[j], u);
#pragma unroll
        for (int k = 0; k < kW; ++k) h[j][k] = cuda::SiluMul(h[j][k], u[k]);
        m = fmaxf(m, quant::AbsMax(h[j]));
      }
    }
    m = cuda::BlockMax(m);
    const float inv = quant::InvScaleOf(m);
    if (threadIdx.x == 0) scales[r] = quant::ScaleOf(m);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int p = threadIdx.x + j * blockDim.x;
      if (p < packs) quant::StoreQ<kW>(qr + static_cast<int64_t>(p) * kW, h[j], inv);
    }
  } else {
    const int64_t packs = d / kW;
    const auto h_of = [&](int64_t p, float (&h)[kW]) {
      float u[kW];
      cuda::LoadFloats<bf16, kW>(xr + p * kW, h);
      cuda::LoadFloats<bf16, kW>(xr + d + p * kW, u);
#pragma unroll
      for (int k = 0; k < kW; ++k) h[k] = cuda::SiluMul(h[k], u[k]);
    };
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float h[kW];
      h_of(p, h);
      m = fmaxf(m, quant::AbsMax(h));
    }
    m = cuda::BlockMax(m);
    const float inv = quant::InvScaleOf(m);
    if (threadIdx.x == 0) scales[r] = quant::ScaleOf(m);
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      float h[kW];
      h_of(p, h);
      quant::StoreQ<kW>(qr + p * kW, h, inv);
    }
  }
}

using RowFn = void (*)(const bf16*, uint8_t*, float*, int64_t);

struct RowPick {
  RowFn kernel = nullptr;
  int threads = 256, packs = 0, width = 1;
  std::string name;
};

RowPick PickRow(int64_t d, bool vec_ok) {
  RowPick l;
  if (vec_ok && d % 8 == 0) {
    l.width = 8;
    const int64_t half_packs = d / 8;
    l.threads = static_cast<int>(
        std::clamp<int64_t>(cuda::RoundUp(std::max<int64_t>(cuda::CeilDiv(half_packs, kTargetPacks), 1), 32), 32,
                            kMaxThreads));
    const int64_t per_thread = cuda::CeilDiv(half_packs, l.threads);
    int bucket = 1;
    while (bucket < per_thread) bucket *= 2;
    l.packs = bucket <= kTargetPacks ? bucket : 0;
    l.kernel = cuda::PickPacks<kTargetPacks>(
        l.packs, [](auto k) -> RowFn { return &SiluMulQuantRow<8, decltype(k)::value>; });
  } else {
    l.kernel = &SiluMulQuantRow<1, 0>;
  }
  l.name = "SiluMulQuantRow<w" + std::to_string(l.width) + (l.packs ? ",regs" + std::to_string(l.packs) : ",loop") +
           ">";
  return l;
}

bool VecOk(const Args& a) { return a.d % 8 == 0 && cuda::Aligned16(a.x) && quant::Aligned8(a.q); }

int LaunchV2(const Args& a, cudaStream_t s) {
  const RowPick l = PickRow(a.d, VecOk(a));
  l.kernel<<<static_cast<unsigned>(a.rows), l.threads, 0, s>>>(a.x, a.q, a.scales, a.d);
  KB_LAUNCH_CHECK();
  return 0;
}


// --- v3: fused, resident blocks, cp.async ring ------------------------------------------------------
// Over the 2d-wide row: pack p = threadIdx.x + j * blockDim.x, and with d / 8 == (kPacks / 2) *
// blockDim.x slot j < kPacks / 2 holds gate pack p, slot j + kPacks / 2 the up pack of the same columns.
template <int kPacks, int kStages, int kThreads>
__global__ void __launch_bounds__(kThreads ? kThreads : 256, cuda::FixedMinBlocks<kThreads, kStages>())
    SiluMulQuantRing(const bf16* __restrict__ x, uint8_t* __restrict__ q, float* __restrict__ scales, int64_t rows,
                     int64_t any_d) {
  constexpr int kW = 8, kHalf = kPacks / 2;
  const int64_t row_len = cuda::RowCols<kPacks, kThreads, kW>(2 * any_d);
  const int64_t d = row_len / 2;
  const int packs = static_cast<int>(row_len / kW);
  __shared__ cuda::WarpPartials<float> partials;
  unsigned parity = 0;
  cuda::ForEachRowStaged<bf16, kPacks, kStages>(x, rows, row_len, packs, [&](int64_t r, const uint4(&row)[kPacks]) {
    float h[kHalf][kW];
    float m = 0.0f;
#pragma unroll
    for (int j = 0; j < kHalf; ++j) {
      float u[kW];
      cuda::WidenPack<bf16>(row[j], h[j]);
      cuda::WidenPack<bf16>(row[j + kHalf], u);
#pragma unroll
      for (int k = 0; k < kW; ++k) h[j][k] = cuda::SiluMul(h[j][k], u[k]);
      m = fmaxf(m, quant::AbsMax(h[j]));
    }
    m = quant::BlockMaxOneBarrier(partials, parity++, m);
    const float inv = quant::InvScaleOf(m);
    if (threadIdx.x == 0) scales[r] = quant::ScaleOf(m);
    uint8_t* qr = q + r * d;
#pragma unroll
    for (int j = 0; j < kHalf; ++j)
      quant::StoreFp8x8(qr + static_cast<int64_t>(threadIdx.x + j * blockDim.x) * kW, quant::ToFp8x8(h[j], inv));
  });
}

using RingFn = void (*)(const bf16*, uint8_t*, float*, int64_t, int64_t);

// The ring instantiation for d, or nullptr (then v2 runs): the row must be an even number of packs a
// thread that pairs gate and up in one thread.
RingFn PickRing(int64_t d, bool vec_ok, int* threads, int* packs) {
  const RingFn k = cuda::PickPipelined(2 * d, 8, vec_ok, threads, packs, [](auto kPacks, auto kThreads) -> RingFn {
    if constexpr (decltype(kPacks)::value % 2 == 0) {
      return &SiluMulQuantRing<kPacks, cuda::kRingStages, kThreads>;
    } else {
      return nullptr;
    }
  });
  const bool paired = k != nullptr && *packs % 2 == 0 && d / 8 == int64_t{*packs / 2} * *threads && d % 8 == 0;
  return paired ? k : nullptr;
}

int LaunchV3(const Args& a, cudaStream_t s) {
  int threads = 0, packs = 0;
  const RingFn k = PickRing(a.d, VecOk(a), &threads, &packs);
  if (k == nullptr) return LaunchV2(a, s);
  return cuda::LaunchPipelined<cuda::kRingStages>(k, threads, packs, a.rows, s, a.x, a.q, a.scales, a.rows, a.d);
}

// --- registration ----------------------------------------------------------------------------------
template <int (*L)(const Args&, cudaStream_t)>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  const Args a{static_cast<const bf16*>(t[0].data), static_cast<uint8_t*>(t[1].data), static_cast<float*>(t[2].data),
               p.dim("rows"), p.dim("d")};
  if (a.rows <= 0) return 0;  // nothing to write
  if (p.dtype != Dtype::kBF16) return static_cast<int>(cudaErrorInvalidValue);
  if (a.d <= 0) return LaunchV2(a, cuda::AsStream(stream));  // empty rows: scales 0
  return L(a, cuda::AsStream(stream));
}

std::vector<LaunchInfo> Launches(int rung, const Problem& p) {
  const int64_t d = p.dim("d");
  if (rung == 1) {
    const bool vec = d % 8 == 0;
    return {{vec ? "SiluAndMul<w8>" : "SiluAndMul<w1>",
             vec ? (const void*)&cuda::SiluAndMulKernel<8> : (const void*)&cuda::SiluAndMulKernel<1>,
             cuda::kSiluAndMulBlock, 0},
            quant::QuantRowsLaunch(d, false)};
  }
  if (rung == 3) {
    int threads = 0, packs = 0;
    if (const RingFn k = PickRing(d, true, &threads, &packs))
      return {{"SiluMulQuantRing<ring" + std::to_string(cuda::kRingStages) + ">", (const void*)k, threads,
               cuda::RingBytes(cuda::kRingStages, packs, threads)}};
  }
  const RowPick l = PickRow(d, true);
  return {{l.name, (const void*)l.kernel, l.threads, 0}};
}

template <int kRung>
std::vector<LaunchInfo> LaunchesOf(const Problem& p) {
  return Launches(kRung, p);
}

std::string RowGridSkip(const Problem& p) {
  return p.dim("rows") > INT_MAX ? "rows over 2^31-1: one block per row exceeds gridDim.x" : "";
}

}  // namespace

void AddSiluMulFp8QuantCudaVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_unfused",
      .description = "silu_and_mul kernel into a bf16 workspace, then the per-token quantize kernel.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = RowGridSkip,
      .run_cuda = Run<LaunchV1>,
      .launches = LaunchesOf<1>,
  });
  op.variants.push_back({
      .name = "cuda_v2_fused",
      .description = "One kernel, block per row: gate, max and quantize with the row in registers.",
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
