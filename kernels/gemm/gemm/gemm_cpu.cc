// CPU variants of gemm (C[M,N] = A[M,K] * B[K,N], row-major, fp32 accumulation).
//   cpu_naive    one thread, i-j-k with one float accumulator per output: B is walked down a column,
//                a cache line per FMA, so the loop runs at memory latency, not at FMA throughput.
//                Problems over 2e10 FLOPs skip (minutes each).
//   cpu_blocked  the GotoBLAS/BLIS structure: B packed into NR-wide panels (widened to float), A
//                packed per MC x KC block into MR-tall panels, and a register-tiled MR x NR
//                micro-kernel written with GCC/Clang vector types, so the compiler maps it onto
//                SIMD registers (6 x 16 with AVX2+FMA when the host has them, 4 x 8 on the baseline
//                ISA); MC x NC tiles of C spread over all threads. Data reuse from registers and
//                L1/L2 is what lifts a GEMM from memory-bound to FMA-bound. For decode shapes
//                (M <= MC = 96: one M block) B is packed per tile, so it crosses memory once.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/cpu/parallel.h"
#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "gemm/gemm/gemm.h"

namespace kbench::kernels {
namespace {

// ---- cpu_naive ----------------------------------------------------------------------------------

// Above this many FLOPs the naive loop (~1 GFLOP/s) would take minutes.
constexpr double kNaiveMaxFlops = 2e10;

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* a = static_cast<const T*>(t[0].data);
    const auto* b = static_cast<const T*>(t[1].data);
    auto* c = static_cast<T*>(t[2].data);
    const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t kk = 0; kk < k; ++kk) acc += cpu::ToFloat(a[i * k + kk]) * cpu::ToFloat(b[kk * n + j]);
        c[i * n + j] = cpu::FromFloat<T>(acc);
      }
  });
}

std::string NaiveSkip(const Problem& p) {
  const double flops = 2.0 * p.dim("M") * p.dim("N") * p.dim("K");
  if (flops <= kNaiveMaxFlops) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "naive CPU GEMM would take minutes at this size (%.3g GFLOP, limit %.3g)",
                flops * 1e-9, kNaiveMaxFlops * 1e-9);
  return buf;
}

// ---- cpu_blocked --------------------------------------------------------------------------------

constexpr int64_t kKc = 256;  // K block: an MR x KC panel of A and a KC x NR panel of B stay in L1.
constexpr int64_t kMc = 96;   // M block: the packed A block (MC x KC floats, 96 KiB) stays in L2.
constexpr int64_t kNc = 256;  // N block: the C tile (MC x NC floats, 96 KiB) stays in L2 across K blocks.

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One C tile's work for one K block: packed A panels times packed B panels, accumulated into c.
struct MacroArgs {
  const float* a;  // m_panels panels, each kc x MR.
  const float* b;  // n_panels panels, b_panel_stride apart, each kc x NR.
  int64_t b_panel_stride;
  float* c;  // m_panels*MR x n_panels*NR, row stride ldc.
  int64_t ldc;
  int64_t m_panels, n_panels, kc;
};
using MacroFn = void (*)(const MacroArgs&);

// Eight floats as one value: GCC/Clang map it to a ymm register (AVX2) or a pair of xmm (SSE2),
// and contract acc += a * b into an FMA where the target has one.
typedef float F8 __attribute__((vector_size(32)));

// An MR x (8*NV) tile of C held in registers over kc steps; per step, NV vector loads of B and MR
// broadcasts of A feed MR*NV independent multiply-adds.
template <int MR, int NV>
[[gnu::always_inline]] inline void MicroKernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                                               float* __restrict c, int64_t ldc) {
  constexpr int kNr = 8 * NV;
  F8 acc[MR][NV] = {};
  for (int64_t k = 0; k < kc; ++k) {
    F8 bv[NV];
    for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + k * kNr + 8 * v, sizeof(F8));  // unaligned load
    for (int i = 0; i < MR; ++i) {
      const float x = a[k * MR + i];
      const F8 ai = {x, x, x, x, x, x, x, x};
      for (int v = 0; v < NV; ++v) acc[i][v] += ai * bv[v];
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) {
      F8 cv;
      std::memcpy(&cv, c + i * ldc + 8 * v, sizeof(F8));
      cv += acc[i][v];
      std::memcpy(c + i * ldc + 8 * v, &cv, sizeof(F8));
    }
}

// B panel outer, A panels inner: the kc x NR panel of B stays in L1 while every A panel streams by.
template <int MR, int NV>
[[gnu::always_inline]] inline void MacroKernel(const MacroArgs& m) {
  for (int64_t jp = 0; jp < m.n_panels; ++jp)
    for (int64_t ip = 0; ip < m.m_panels; ++ip)
      MicroKernel<MR, NV>(m.kc, m.a + ip * m.kc * MR, m.b + jp * m.b_panel_stride, m.c + ip * MR * m.ldc + jp * 8 * NV,
                          m.ldc);
}

// Baseline ISA (SSE2 on x86-64): 4 x 8 is 8 of the 16 xmm registers for accumulators.
void MacroGeneric(const MacroArgs& m) { MacroKernel<4, 1>(m); }

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2 + FMA: 6 x 16 is 12 of the 16 ymm registers, enough independent FMAs to hide their latency.
__attribute__((target("avx2,fma"))) void MacroAvx2(const MacroArgs& m) { MacroKernel<6, 2>(m); }
#endif

struct MicroShape {
  int mr, nr;
  MacroFn macro;
};

MicroShape SelectMicroShape() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {6, 16, MacroAvx2};
#endif
  return {4, 8, MacroGeneric};
}

// Rows [k0, k0+kc) x cols [j0, j0+cols) of B[., n] -> panels of nr columns, each kc x nr, widened to
// float and zero-padded past the last column.
template <class T>
void PackB(const T* b, int64_t n, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int nr, float* bp) {
  for (int64_t jp = 0; jp < CeilDiv(cols, nr); ++jp) {
    const int64_t width = std::min<int64_t>(nr, cols - jp * nr);
    float* dst = bp + jp * kc * nr;
    for (int64_t kk = 0; kk < kc; ++kk) {
      const T* src = b + (k0 + kk) * n + j0 + jp * nr;
      int64_t j = 0;
      for (; j < width; ++j) dst[kk * nr + j] = cpu::ToFloat(src[j]);
      for (; j < nr; ++j) dst[kk * nr + j] = 0;
    }
  }
}

// Rows [m0, m0+mc) x cols [k0, k0+kc) of A[., k] -> panels of mr rows, each kc x mr, zero-padded.
template <class T>
void PackA(const T* a, int64_t k, int64_t m0, int64_t mc, int64_t k0, int64_t kc, int mr, float* ap) {
  for (int64_t ip = 0; ip < CeilDiv(mc, mr); ++ip) {
    float* dst = ap + ip * kc * mr;
    for (int r = 0; r < mr; ++r) {
      const int64_t row = ip * mr + r;
      if (row < mc) {
        const T* src = a + (m0 + row) * k + k0;
        for (int64_t kk = 0; kk < kc; ++kk) dst[kk * mr + r] = cpu::ToFloat(src[kk]);
      } else {
        for (int64_t kk = 0; kk < kc; ++kk) dst[kk * mr + r] = 0;
      }
    }
  }
}

// C is cut into MC x NC tiles handed out to the threads; each tile runs the whole K loop into a float
// accumulator and is rounded to the storage type once at the end.
template <class T>
void GemmBlocked(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, cpu::FromFloat<T>(0.0f));
    return;
  }
  static const MicroShape shape = SelectMicroShape();
  const int mr = shape.mr, nr = shape.nr;

  // Narrower N blocks when M gives few blocks (decode shapes), so every thread gets tiles.
  const int64_t threads = cpu::HardwareThreads();
  const int64_t m_blocks = CeilDiv(m, kMc);
  const int64_t n_split = std::max<int64_t>(1, CeilDiv(2 * threads, m_blocks));
  const int64_t nc = std::clamp<int64_t>(CeilDiv(CeilDiv(n, n_split), nr) * nr, nr, kNc);  // multiple of nr
  const int64_t n_blocks = CeilDiv(n, nc);
  const int64_t tiles = m_blocks * n_blocks;

  // With several M blocks every B element is reused by each of them: pack all of B once, in parallel.
  // With one (M <= MC, decode) each B element is used by one tile only: pack it there, per K block,
  // so B crosses memory once instead of three times (read, write packed, read packed).
  const bool pack_b_once = m_blocks > 1;
  std::unique_ptr<float[]> bp;
  if (pack_b_once) {
    const int64_t n_panels = CeilDiv(n, nr);
    bp = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(n_panels * nr * k));
    cpu::ParallelFor(n_panels, std::max<int64_t>(1, 65536 / (k * nr)), [&](int64_t p0, int64_t p1) {
      PackB(b, n, 0, k, p0 * nr, std::min(n, p1 * nr) - p0 * nr, nr, bp.get() + p0 * k * nr);
    });
  }

  std::atomic<int64_t> next{0};  // Tiles handed out one at a time: edge tiles are cheaper.
  const int64_t mc_pad = CeilDiv(kMc, mr) * mr, ldc = nc;
  cpu::ParallelFor(std::min(threads, tiles), 1, [&](int64_t, int64_t) {
    std::vector<float> ap(static_cast<size_t>(mc_pad * kKc)), acc(static_cast<size_t>(mc_pad * ldc));
    std::vector<float> bt(pack_b_once ? 0 : static_cast<size_t>(kKc * nc));
    for (int64_t tile; (tile = next.fetch_add(1)) < tiles;) {
      const int64_t m0 = (tile / n_blocks) * kMc, n0 = (tile % n_blocks) * nc;
      const int64_t mc = std::min(kMc, m - m0), ncur = std::min(nc, n - n0);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t k0 = 0; k0 < k; k0 += kKc) {
        const int64_t kc = std::min(kKc, k - k0);
        PackA(a, k, m0, mc, k0, kc, mr, ap.data());
        if (!pack_b_once) PackB(b, n, k0, kc, n0, ncur, nr, bt.data());
        shape.macro({.a = ap.data(),
                     .b = pack_b_once ? bp.get() + (n0 / nr) * k * nr + k0 * nr : bt.data(),
                     .b_panel_stride = pack_b_once ? k * nr : kc * nr,
                     .c = acc.data(),
                     .ldc = ldc,
                     .m_panels = CeilDiv(mc, mr),
                     .n_panels = CeilDiv(ncur, nr),
                     .kc = kc});
      }
      for (int64_t i = 0; i < mc; ++i)
        for (int64_t j = 0; j < ncur; ++j) c[(m0 + i) * n + n0 + j] = cpu::FromFloat<T>(acc[i * ldc + j]);
    }
  });
}

void RunBlocked(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    GemmBlocked(static_cast<const T*>(t[0].data), static_cast<const T*>(t[1].data), static_cast<T*>(t[2].data),
                p.dim("M"), p.dim("N"), p.dim("K"));
  });
}

}  // namespace

void AddGemmCpuVariants(OpDef& op) {
  op.variants.push_back(cpu::MakeCpuVariant(
      op, "cpu_naive", "One thread, i-j-k loops.", RunNaive,
      NaiveSkip));
  op.variants.push_back(
      cpu::MakeCpuVariant(op, "cpu_blocked",
                          "Packed panels, cache blocking, a register-tiled micro-kernel on all threads.",
                          RunBlocked));
}

}  // namespace kbench::kernels
