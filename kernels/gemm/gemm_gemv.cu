// gemm for decode shapes (M <= 64): the GEMV end of the ladder. With M = 1 every element of B is used
// once: 2NK FLOPs on NK elements, I = 1 FLOP/B in bf16 (0.5 in fp32), far left of any ridge, so the
// time is B's bytes over memory bandwidth and neither tiling nor tensor cores help (chapter 5:
// "GEMV ... only fewer weight bytes make it faster"). What a GEMV kernel can do is keep enough bytes
// in flight to saturate HBM (Little's law: ~4-5 MB on an H100/H200) and read each byte of B once.
//
// Rung:
//   cuda_gemv   each thread streams one 16-byte column group of B (8 bf16 / 4 floats) down a slice
//               of K with several 16-byte loads in flight (L1 bypassed: B is read once), holding up
//               to 8 rows of C for those columns in registers; the 64 k-slices of a block are summed
//               with warp shuffles and one shared-memory pass, in a fixed order (deterministic).
//               M > 8 re-reads B once per 8 rows (mostly from L2 when B fits); M > 64 skips, the
//               tiled rungs own those shapes. Without 16-byte alignment (N not a multiple of the
//               vector width, or an offset tensor) a thread takes one column and a warp 32
//               consecutive columns.
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec.cuh"
#include "core/cuda/warp_reduce.cuh"
#include "gemm/gemm_cuda.cuh"

namespace kbench::kernels::gemm {
namespace {

using cuda::CeilDiv;
using cuda::FromFloat;
using cuda::ToFloat;

constexpr int kGemvThreads = 256;
constexpr int kGemvWarps = kGemvThreads / 32;
constexpr int64_t kGemvMaxM = 64;

// Column groups per block: 4 groups of 16 bytes (a warp reads 8 rows x 64 contiguous bytes) on the
// vector path; 32 single columns (a warp reads 32 consecutive elements of one row) otherwise.
template <int kVec>
constexpr int ColumnGroups() {
  return kVec > 1 ? 4 : 32;
}

// kVec elements of B starting at p, widened to float. kVec > 1: one 16-byte load that skips L1
// (.nc: read-only for the kernel's lifetime; L1::no_allocate: streamed once, keep L1 for A).
template <typename T, int kVec>
__device__ __forceinline__ void LoadB(const T* p, float (&v)[kVec]) {
  if constexpr (kVec == 1) {
    v[0] = ToFloat(*p);
  } else {
    uint32_t r[4];
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "l"(p));
    if constexpr (sizeof(T) == 4) {
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = __uint_as_float(r[i]);
    } else {
      // bf16 is the high half of a float: widening is a shift or a mask.
#pragma unroll
      for (int i = 0; i < 4; ++i) v[2 * i] = __uint_as_float(r[i] << 16), v[2 * i + 1] = __uint_as_float(r[i] & 0xffff0000u);
    }
  }
}

// Block: kCg column groups x kKs k-slices; slice s takes rows s, s + kKs, s + 2 kKs, ... of B.
// Grid: x over column groups, y over blocks of kRows rows of C.
template <typename T, int kVec, int kRows>
__global__ void __launch_bounds__(kGemvThreads)
    GemmGemv(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  constexpr int kCg = ColumnGroups<kVec>();
  constexpr int kKs = kGemvThreads / kCg;
  // Loads in flight per thread, bounded by registers (the scalar path moves 4x fewer bytes per load
  // but is only the fallback for unaligned rows).
  constexpr int kUnroll = kRows <= 2 && kVec > 1 ? 8 : 4;
  __shared__ float partial[kGemvWarps][kCg][kRows * kVec];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cg = lane % kCg;
  const int ks = warp * (32 / kCg) + lane / kCg;
  const int64_t col0 = (static_cast<int64_t>(blockIdx.x) * kCg + cg) * kVec;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kRows;
  const int rows = static_cast<int>(m - m0 < kRows ? m - m0 : kRows);  // rows of C this block writes

  float acc[kRows][kVec] = {};
  // The vector path has n % kVec == 0, so a group is wholly inside or wholly outside.
  if (col0 < n) {
    const T* bcol = b + col0;
    const T* arow = a + m0 * k;
    // One step: kUnroll rows of B loaded first (independent 16-byte loads in flight), then used.
    const auto step = [&](int64_t kk, int count) {
      float bv[kUnroll][kVec];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (u < count) LoadB<T, kVec>(bcol + (kk + static_cast<int64_t>(u) * kKs) * n, bv[u]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (u >= count) break;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          // A is tiny and shared by every thread: cached loads, mostly L1 hits.
          const float av = r < rows ? ToFloat(arow[r * k + kk + static_cast<int64_t>(u) * kKs]) : 0.0f;
#pragma unroll
          for (int v = 0; v < kVec; ++v) acc[r][v] += av * bv[u][v];
        }
      }
    };
    int64_t kk = ks;
    for (; kk + static_cast<int64_t>(kUnroll - 1) * kKs < k; kk += static_cast<int64_t>(kUnroll) * kKs) step(kk, kUnroll);
    if (kk < k) step(kk, static_cast<int>((k - kk + kKs - 1) / kKs));  // the last 1 .. kUnroll-1 rows
  }

  // Sum the k-slices: first the 32 / kCg slices inside a warp (lanes kCg apart hold the same
  // columns), then the warps through shared memory. Fixed order: the same bits every run.
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int v = 0; v < kVec; ++v)
#pragma unroll
      for (int off = kCg; off < 32; off <<= 1) acc[r][v] += __shfl_xor_sync(cuda::kFullWarp, acc[r][v], off);
  if (lane < kCg) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int v = 0; v < kVec; ++v) partial[warp][lane][r * kVec + v] = acc[r][v];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < kCg * kRows * kVec; e += kGemvThreads) {
    const int g = e / (kRows * kVec), rv = e % (kRows * kVec), r = rv / kVec, v = rv % kVec;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kGemvWarps; ++w) s += partial[w][g][rv];
    const int64_t col = (static_cast<int64_t>(blockIdx.x) * kCg + g) * kVec + v;
    if (r < rows && col < n) c[(m0 + r) * n + col] = FromFloat<T>(s);
  }
}

template <typename T, int kVec, int kRows>
int LaunchGemvAs(const GemmArgs& g, cudaStream_t s) {
  constexpr int kCg = ColumnGroups<kVec>();
  const dim3 grid(static_cast<unsigned>(CeilDiv(CeilDiv(g.n, kVec), kCg)), static_cast<unsigned>(CeilDiv(g.m, kRows)));
  GemmGemv<T, kVec, kRows><<<grid, kGemvThreads, 0, s>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                          static_cast<T*>(g.c), g.m, g.n, g.k);
  KB_LAUNCH_CHECK();
  return 0;
}

// Rows of C per thread: the fewest that cover M (each extra row costs registers), at most 8.
int RowsFor(int64_t m) { return m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8; }

template <typename T>
bool VecOk(const GemmArgs& g) {
  return g.n % cuda::kVec16<T> == 0 && Aligned(g.b, 16);
}

template <typename T, int kVec>
int LaunchGemvVec(const GemmArgs& g, cudaStream_t s) {
  switch (RowsFor(g.m)) {
    case 1: return LaunchGemvAs<T, kVec, 1>(g, s);
    case 2: return LaunchGemvAs<T, kVec, 2>(g, s);
    case 4: return LaunchGemvAs<T, kVec, 4>(g, s);
    default: return LaunchGemvAs<T, kVec, 8>(g, s);
  }
}

template <typename T>
int LaunchGemv(const GemmArgs& g, cudaStream_t s) {
  return VecOk<T>(g) ? LaunchGemvVec<T, cuda::kVec16<T>>(g, s) : LaunchGemvVec<T, 1>(g, s);
}

int RunGemv(const Problem& p, std::span<const Tensor> t, void* stream) {
  const GemmArgs g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (g.m > kGemvMaxM) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason says so
  return cuda::DispatchDtype(p.dtype, [&](auto tag) { return LaunchGemv<decltype(tag)>(g, s); });
}

template <typename T, int kVec>
const void* GemvKernel(int rows) {
  switch (rows) {
    case 1: return (const void*)&GemmGemv<T, kVec, 1>;
    case 2: return (const void*)&GemmGemv<T, kVec, 2>;
    case 4: return (const void*)&GemmGemv<T, kVec, 4>;
    default: return (const void*)&GemmGemv<T, kVec, 8>;
  }
}

template <typename T>
std::vector<LaunchInfo> GemvLaunches(const Problem& p) {
  const int rows = RowsFor(p.dim("M"));
  const bool vec = p.dim("N") % cuda::kVec16<T> == 0;
  const std::string name = std::string("GemmGemv<") + cuda::TypeName<T>() + (vec ? ",vec16" : ",scalar") + ",rows" +
                           std::to_string(rows) + ">";
  return {{name, vec ? GemvKernel<T, cuda::kVec16<T>>(rows) : GemvKernel<T, 1>(rows), kGemvThreads, 0}};
}

std::vector<LaunchInfo> LaunchesGemv(const Problem& p) {
  return p.dtype == Dtype::kBF16 ? GemvLaunches<__nv_bfloat16>(p) : GemvLaunches<float>(p);
}

std::string SkipGemv(const Problem& p) {
  if (std::string why = DtypeSkip(p, {Dtype::kF32, Dtype::kBF16}); !why.empty()) return why;
  if (p.dim("M") > kGemvMaxM)
    return "M = " + std::to_string(p.dim("M")) + " > 64: a decode (GEMV-like) rung; it would re-read B once per 8 "
           "rows of C, the tiled rungs own these shapes";
  return "";
}

}  // namespace

void AddGemmGemvVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_gemv",
      .description = "Decode shapes (M <= 64): B streamed once with 16-byte loads that bypass L1, several in "
                     "flight per thread, rows of C in registers, k-slices summed in a fixed order. Bound by B's "
                     "bytes over HBM bandwidth (I = 1 FLOP/B in bf16 at M = 1).",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kF32, Dtype::kBF16},
      .skip_reason = SkipGemv,
      .run_cuda = RunGemv,
      .launches = LaunchesGemv,
  });
}

}  // namespace kbench::kernels::gemm
