// w4a16_gemv_probe: where w4a16_gemm's M = 1 time goes (kernels/quant/GEMM_README.md cites it). A
// program that prints a table, not a test: on the same bytes, cold L2 (a 256 MB read before each
// sample), CUDA events around the launch, medians of 50,
//   read         a plain read of the weights' bytes (16-byte loads, 4 in flight a thread, grid-stride):
//                what reading them costs, launch included;
//   lean         the M <= 8 kernel of cuda_v4_mma_gemv (GemvMmaLean's chunk math and ring) on W_tiled;
//   chunk-major  the same with W_tiled's kilobyte chunks laid out chunk-major (chunk c of tile t at
//                c * tiles + t), so that at any moment the warps read neighbouring kilobytes;
//   4 chains     the same as lean with the chunk's two accumulation chains of 8 mmas cut into four of 4;
//   A ahead      the same as 4 chains with A's fragments of the next chunk requested before this
//                chunk's mmas;
//   read tiles   lean's grid, blocks and loads with the math replaced by an xor: what the kernel's
//                shape of reading costs without its arithmetic;
//   lean P6, P8, read tiles P8: the same with a ring of 6 or 8 chunks a warp instead of 4 (more
//                bytes in flight an SM: the plain read keeps ~128 KB an SM in flight, lean ~56 KB); P8's
//                launch bound is 12 warps an SM (no spills), so 1 x 14336 x 4096's 896 blocks need
//                7 an SM where 6 fit;
//   lean 2x warps, read tiles 2x warps (P4, P8): twice the warps on each tile's K (half the chunks a
//                warp), so twice the warps an SM where the blocks fit (lean's 128 registers do not
//                at 14336 rows: 896 blocks of 4 warps for 528 slots);
//   read x8      the plain read with 8 loads in flight a thread instead of 4;
//   cuBLAS bf16  cublasGemmEx on the same N x K in bf16 (4x the bytes), as the op's cublas_bf16 variant
//                calls it: the ratio the issue's target is stated in, measured in this process.
// The last column is cuBLAS's time over the fastest plain read of the 4-bit bytes: the ratio to cuBLAS
// that a kernel which did nothing but read its weights would reach here.
// Each form's output is checked against an fp64 CPU reference (max error against the bf16 rounding of
// the largest output); lean and chunk-major must also agree bitwise (the same sums in the same order).
//   w4a16_gemv_probe            the decode shapes 1 x 14336 x 4096, 1 x 4096 x 14336, 1 x 4096 x 4096
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "quant/w4a16_gemm/w4a16_mma_lean.cuh"

namespace {

using namespace kbench::kernels::w4a16;
using kbench::kernels::Bf16ToFloat;
using kbench::kernels::W4TiledWord;
using bf16 = __nv_bfloat16;

enum Form { kLean = 0, kChunkMajor = 1, kFourChains = 2, kAAhead = 3, kReadTiles = 4 };
// The timed forms, in the order of launch's cases (read tiles compute nothing to check).
struct FormCase {
  Form form;
  const char* name;
};
constexpr FormCase kCases[] = {{kLean, "lean"},          {kChunkMajor, "chunk-major"},   {kFourChains, "4 chains"},
                               {kAAhead, "A ahead"},     {kReadTiles, "read tiles"},     {kLean, "lean P6"},
                               {kLean, "lean P8"},       {kReadTiles, "read tiles P8"},  {kLean, "lean 2x warps"},
                               {kReadTiles, "read tiles 2x warps"}, {kReadTiles, "read tiles 2x warps P8"}};
constexpr int kNumCases = sizeof(kCases) / sizeof(kCases[0]);

// M = 1, N a multiple of 16, K a multiple of 128: GemvMmaLean's block (SPLIT warps on a tile's K, a
// ring of P chunks a warp) with the form's change.
template <int SPLIT, int P, Form F>
__global__ void __launch_bounds__(32 * SPLIT, (P > 6 ? 12 : 16) / SPLIT)
    Probe(const bf16* a, const uint4* w, const bf16* scales, const bf16* zeros, bf16* c, int n, int k) {
  __shared__ float red[SPLIT][32][4];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int chunks = k / 128, tiles = n / 16;
  const int per = (chunks + SPLIT - 1) / SPLIT;
  const int c0 = min(warp * per, chunks), nc = min(c0 + per, chunks) - c0;
  const int tile = blockIdx.x;
  const int64_t r0 = tile * 16 + g, r1 = r0 + 8;
  const bf16 *s0 = scales + r0 * chunks + c0, *s1 = scales + r1 * chunks + c0;
  const bf16 *z0 = zeros + r0 * chunks + c0, *z1 = zeros + r1 * chunks + c0;
  const bool has_a = g == 0;
  const bf16* pa = a + int64_t{c0} * 128 + 32 * t;
  constexpr bool kChunkMajorLayout = F == kChunkMajor;
  const int64_t stride = kChunkMajorLayout ? int64_t{tiles} * 64 : 64;
  const uint4* w0 =
      w + (kChunkMajorLayout ? (int64_t{c0} * tiles + tile) * 64 : (int64_t{tile} * chunks + c0) * 64) + lane;
  const uint4* w1 = w0 + 32;
  float acc[4] = {};
  LeanChunk ring[P];
  const auto load = [&](LeanChunk& x, int j) {
    x.w0 = LoadStreamInOrder(w0 + j * stride);
    x.w1 = LoadStreamInOrder(w1 + j * stride);
    x.s0 = LoadBf16Bits(s0 + j), x.s1 = LoadBf16Bits(s1 + j);
    x.z0 = LoadBf16Bits(z0 + j), x.z1 = LoadBf16Bits(z1 + j);
  };
#pragma unroll
  for (int i = 0; i < P; ++i)
    if (i < nc) load(ring[i], i);
  uint32_t bits = 0;
  uint4 next_a[4];
  if constexpr (F == kAAhead) LeanLoadAFragments(next_a, pa, has_a && nc > 0);
  for (int left = nc; left > 0; left -= P) {
#pragma unroll
    for (int i = 0; i < P; ++i) {
      if (i < left) {
        const LeanChunk& x = ring[i];
        if constexpr (F == kReadTiles) {
          bits ^= x.w0.x ^ x.w0.y ^ x.w0.z ^ x.w0.w ^ x.w1.x ^ x.w1.y ^ x.w1.z ^ x.w1.w ^ x.s0 ^ x.s1 ^ x.z0 ^ x.z1;
        } else if constexpr (F == kAAhead) {
          uint4 bf[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) bf[u] = next_a[u];
          LeanLoadAFragments(next_a, pa + (i + 1) * 128, has_a && i + 1 < left);
          LeanChunkMathOn<2>(acc, x.w0, x.w1, x.s0, x.s1, x.z0, x.z1, bf);
        } else if constexpr (F == kFourChains) {
          uint4 bf[4];
          LeanLoadAFragments(bf, pa + i * 128, has_a);
          LeanChunkMathOn<2>(acc, x.w0, x.w1, x.s0, x.s1, x.z0, x.z1, bf);
        } else {
          LeanChunkMath(acc, x.w0, x.w1, x.s0, x.s1, x.z0, x.z1, pa + i * 128, has_a);
        }
        if (i + P < left) load(ring[i], i + P);
      }
    }
    w0 += P * stride, w1 += P * stride, s0 += P, s1 += P, z0 += P, z1 += P, pa += P * 128;
  }
  if constexpr (F == kReadTiles) {
    if (bits == 0x12345678u) c[0] = __float2bfloat16_rn(1.0f);  // keeps the loads; never true in practice
  } else {
    for (int i = 0; i < 4; ++i) red[warp][lane][i] = acc[i];
    __syncthreads();
    if (warp > 0) return;
    for (int q = 1; q < SPLIT; ++q)
      for (int i = 0; i < 4; ++i) acc[i] += red[q][lane][i];
    if (t == 0) {
      c[tile * 16 + g] = __float2bfloat16_rn(acc[0]);
      c[tile * 16 + g + 8] = __float2bfloat16_rn(acc[2]);
    }
  }
}

template <int U>
__global__ void __launch_bounds__(256) ReadAll(const uint4* __restrict__ p, size_t n, int* sink) {
  uint32_t x = 0;
  const size_t step = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (; i + (U - 1) * step < n; i += U * step) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = LoadStreamInOrder(p + i + u * step);
#pragma unroll
    for (int u = 0; u < U; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += step) {
    const uint4 v = LoadStreamInOrder(p + i);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x12345678u) *sink = static_cast<int>(x);
}

__global__ void FlushRead(const int4* p, size_t n, int* sink) {
  int x = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const int4 v = __ldcg(p + i);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x12345678) *sink = x;
}

// Seeded bf16 values in [-1, 1) for cuBLAS's weights (never zeros: a GEMM of zeros can take other paths).
__global__ void FillBf16(bf16* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9e3779b9u ^ seed;
    h ^= h >> 16, h *= 0x7feb352du, h ^= h >> 15;
    p[i] = __float2bfloat16_rn(static_cast<float>(h >> 8) * 0x1p-23f - 1.0f);
  }
}

bool Ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::printf("CUDA error %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

// Medians of 50 cold samples of launch() between two events.
template <typename L>
float ColdMedianUs(L launch, int4* flush, size_t flush_bytes) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> us;
  for (int i = 0; i < 50; ++i) {
    FlushRead<<<1024, 256>>>(flush, flush_bytes / 16, reinterpret_cast<int*>(flush));
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    us.push_back(ms * 1e3f);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct Buffers {
  int4* flush = nullptr;
  size_t flush_bytes = size_t{256} << 20;
  cublasHandle_t blas = nullptr;
};

// One shape: every form, checked, then timed twice in alternation. Returns false on a failed check.
template <int S>
bool RunShape(int n, int k, const Buffers& b) {
  const int chunks = k / 128, tiles = n / 16, words = k / 8;
  const size_t wbytes = static_cast<size_t>(n) * k / 2;
  // W in the op's format (w4a16_gemm.h), random codes; W_tiled by W4TiledWord; the chunk-major copy.
  std::vector<uint32_t> w(wbytes / 4), tiled(wbytes / 4), cmajor(wbytes / 4);
  uint64_t st = 0x9e3779b97f4a7c15ull;
  for (auto& v : w) {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    v = static_cast<uint32_t>(st);
  }
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < words; ++i) tiled[W4TiledWord(r, i, n, k)] = w[static_cast<size_t>(r) * words + i];
  for (int t = 0; t < tiles; ++t)
    for (int c = 0; c < chunks; ++c)
      std::memcpy(&cmajor[(static_cast<size_t>(c) * tiles + t) * 256], &tiled[(static_cast<size_t>(t) * chunks + c) * 256], 1024);
  std::vector<uint16_t> sc(static_cast<size_t>(n) * chunks), ze(static_cast<size_t>(n) * chunks), av(k);
  for (size_t i = 0; i < sc.size(); ++i) sc[i] = 0x3c00 + (i % 4) * 0x10, ze[i] = 0x4100 + (i % 3) * 0x40;
  for (int i = 0; i < k; ++i) av[i] = 0x3f80 + ((i * 37) % 64) - 32;
  std::vector<double> ref(n);
  double ref_max = 0;
  for (int r = 0; r < n; ++r) {
    double sum = 0;
    for (int kk = 0; kk < k; ++kk) {
      const uint32_t word = w[static_cast<size_t>(r) * words + kk / 8];
      const int j = kk % 8, q = (word >> (4 * (j / 2 + 4 * (j % 2)))) & 0xf;
      const size_t gi = static_cast<size_t>(r) * chunks + kk / 128;
      sum += (q - double{Bf16ToFloat(ze[gi])}) * Bf16ToFloat(sc[gi]) * Bf16ToFloat(av[kk]);
    }
    ref[r] = sum;
    ref_max = std::max(ref_max, std::fabs(sum));
  }

  uint4 *dt = nullptr, *dc = nullptr;
  bf16 *da = nullptr, *ds = nullptr, *dz = nullptr, *dout = nullptr;
  bool ok = Ok(cudaMalloc(&dt, wbytes), "malloc") && Ok(cudaMalloc(&dc, wbytes), "malloc") &&
            Ok(cudaMalloc(&da, k * 2), "malloc") && Ok(cudaMalloc(&ds, sc.size() * 2), "malloc") &&
            Ok(cudaMalloc(&dz, ze.size() * 2), "malloc") && Ok(cudaMalloc(&dout, size_t{kNumCases} * n * 2), "malloc");
  ok = ok && Ok(cudaMemcpy(dt, tiled.data(), wbytes, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(dc, cmajor.data(), wbytes, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(da, av.data(), k * 2, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(ds, sc.data(), sc.size() * 2, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(dz, ze.data(), ze.size() * 2, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemset(dout, 0xff, size_t{kNumCases} * n * 2), "poison");
  bf16* dwb = nullptr;  // cuBLAS's bf16 weights, N x K row-major
  ok = ok && Ok(cudaMalloc(&dwb, size_t{2} * n * k), "malloc");
  if (ok) FillBf16<<<1024, 256>>>(dwb, static_cast<size_t>(n) * k, 0x5eed);
  const auto launch = [&](int f) {
    bf16* out = dout + static_cast<size_t>(f) * n;
    const auto go = [&](auto kernel, int warps = S) {
      kernel<<<tiles, 32 * warps>>>(da, f == 1 ? dc : dt, ds, dz, out, n, k);
    };
    switch (f) {
      case 0: return go(Probe<S, 4, kLean>);
      case 1: return go(Probe<S, 4, kChunkMajor>);
      case 2: return go(Probe<S, 4, kFourChains>);
      case 3: return go(Probe<S, 4, kAAhead>);
      case 4: return go(Probe<S, 4, kReadTiles>);
      case 5: return go(Probe<S, 6, kLean>);
      case 6: return go(Probe<S, 8, kLean>);
      case 7: return go(Probe<S, 8, kReadTiles>);
      case 8: return go(Probe<2 * S, 4, kLean>, 2 * S);
      case 9: return go(Probe<2 * S, 4, kReadTiles>, 2 * S);
      case 10: return go(Probe<2 * S, 8, kReadTiles>, 2 * S);
    }
  };
  static_assert(kNumCases == 11, "launch covers every case");
  const float one = 1.0f, zero = 0.0f;
  // As the op's cublas_bf16 variant: column-major C^T[N,1] = W^T(K x N col-major, transposed) a.
  const auto cublas = [&] {
    return cublasGemmEx(b.blas, CUBLAS_OP_T, CUBLAS_OP_N, n, 1, k, &one, dwb, CUDA_R_16BF, k, da, CUDA_R_16BF, k,
                        &zero, dout + size_t{4} * n, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  ok = ok && cublas() == CUBLAS_STATUS_SUCCESS;
  std::vector<uint16_t> out(size_t{kNumCases} * n);
  if (ok) {
    for (int f = 0; f < kNumCases; ++f) launch(f);
    ok = Ok(cudaDeviceSynchronize(), "forms") &&
         Ok(cudaMemcpy(out.data(), dout, out.size() * 2, cudaMemcpyDeviceToHost), "copy back");
  }
  for (int f = 0; ok && f < kNumCases; ++f) {
    if (kCases[f].form == kReadTiles) continue;
    double err = 0;
    for (int r = 0; r < n; ++r) err = std::max(err, std::fabs(Bf16ToFloat(out[static_cast<size_t>(f) * n + r]) - ref[r]));
    // One bf16 rounding of the largest output, with room for f32 sums in another order.
    if (!(err <= ref_max * std::ldexp(1.0, -7))) {
      std::printf("1 x %d x %d %s: max error %.4g against the fp64 reference (largest output %.4g): FAILED\n", n, k,
                  kCases[f].name, err, ref_max);
      ok = false;
    }
  }
  if (ok && std::memcmp(out.data(), out.data() + n, static_cast<size_t>(n) * 2) != 0) {
    std::printf("1 x %d x %d: lean and chunk-major differ (the same sums should give the same bits): FAILED\n", n, k);
    ok = false;
  }
  if (ok) {
    constexpr int kCols = kNumCases + 3;  // read, read x8, the forms, cuBLAS
    float t[2][kCols];
    const size_t n16 = wbytes / 16;
    int* sink = reinterpret_cast<int*>(b.flush);
    for (int round = 0; round < 2; ++round) {
      t[round][0] = ColdMedianUs([&] { ReadAll<4><<<132 * 8, 256>>>(dt, n16, sink); }, b.flush, b.flush_bytes);
      t[round][1] = ColdMedianUs([&] { ReadAll<8><<<132 * 8, 256>>>(dt, n16, sink); }, b.flush, b.flush_bytes);
      for (int f = 0; f < kNumCases; ++f) t[round][f + 2] = ColdMedianUs([&] { launch(f); }, b.flush, b.flush_bytes);
      t[round][kCols - 1] = ColdMedianUs([&] { cublas(); }, b.flush, b.flush_bytes);
    }
    ok = Ok(cudaGetLastError(), "timing");
    if (ok) {
      std::printf("| 1 x %d x %d | %d | %.1f |", n, k, S, wbytes / 1e6);
      for (int col = 0; col < kCols; ++col) std::printf(" %.2f, %.2f |", t[0][col], t[1][col]);
      const float floor = std::min({t[0][0], t[1][0], t[0][1], t[1][1]});
      const float blas = std::min(t[0][kCols - 1], t[1][kCols - 1]);
      std::printf(" %.2f |\n", blas / floor);
    }
  }
  cudaFree(dwb), cudaFree(dt), cudaFree(dc), cudaFree(da), cudaFree(ds), cudaFree(dz), cudaFree(dout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::printf("usage: %s\n  times w4a16's M = 1 GEMV forms beside a plain read of the same bytes (see the"
                " file's header)\n", argv[0]);
    return std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
  }
  Buffers b;
  if (!Ok(cudaMalloc(&b.flush, b.flush_bytes), "malloc flush") || !Ok(cudaMemset(b.flush, 1, b.flush_bytes), "fill"))
    return 1;
  std::printf("cold L2, CUDA events around one launch, medians of 50, two rounds (us)\n\n");
  if (cublasCreate(&b.blas) != CUBLAS_STATUS_SUCCESS) {
    std::printf("cublasCreate failed\n");
    return 1;
  }
  std::printf("| M x N x K | warps a tile | 4-bit MB | read | read x8 |");
  for (const FormCase& c : kCases) std::printf(" %s |", c.name);
  std::printf(" cuBLAS bf16 | cuBLAS / fastest read |\n| --- | ---: | ---: | --- | --- |");
  for (int i = 0; i < kNumCases; ++i) std::printf(" --- |");
  std::printf(" --- | ---: |\n");
  bool ok = RunShape<2>(14336, 4096, b);
  ok = RunShape<8>(4096, 14336, b) && ok;
  ok = RunShape<8>(4096, 4096, b) && ok;
  cublasDestroy(b.blas);
  cudaFree(b.flush);
  return ok ? 0 : 1;
}
