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
//                chunk's mmas.
// Each form's output is checked against an fp64 CPU reference (max error against the bf16 rounding of
// the largest output); lean and chunk-major must also agree bitwise (the same sums in the same order).
//   w4a16_gemv_probe            the decode shapes 1 x 14336 x 4096, 1 x 4096 x 14336, 1 x 4096 x 4096
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "quant/w4a16_gemm/w4a16_mma_lean.cuh"

namespace {

using namespace kbench::kernels::w4a16;
using kbench::kernels::W4TiledWord;
using bf16 = __nv_bfloat16;

enum Form { kLean = 0, kChunkMajor = 1, kFourChains = 2, kAAhead = 3 };
const char* const kFormNames[] = {"lean", "chunk-major", "4 chains", "A ahead"};

// M = 1, N a multiple of 16, K a multiple of 128: GemvMmaLean's block (SPLIT warps on a tile's K, a
// ring of P chunks a warp) with the form's change.
template <int SPLIT, int P, Form F>
__global__ void __launch_bounds__(32 * SPLIT, 16 / SPLIT)
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
  uint4 next_a[4];
  if constexpr (F == kAAhead) LeanLoadAFragments(next_a, pa, has_a && nc > 0);
  for (int left = nc; left > 0; left -= P) {
#pragma unroll
    for (int i = 0; i < P; ++i) {
      if (i < left) {
        const LeanChunk& x = ring[i];
        if constexpr (F == kAAhead) {
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

__global__ void __launch_bounds__(256) ReadAll(const uint4* __restrict__ p, size_t n, int* sink) {
  uint32_t x = 0;
  const size_t step = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (; i + 3 * step < n; i += 4 * step) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = LoadStreamInOrder(p + i + u * step);
#pragma unroll
    for (int u = 0; u < 4; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
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

bool Ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::printf("CUDA error %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

float Bf16ToFloat(uint16_t b) {
  uint32_t u = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
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
            Ok(cudaMalloc(&dz, ze.size() * 2), "malloc") && Ok(cudaMalloc(&dout, size_t{4} * n * 2), "malloc");
  ok = ok && Ok(cudaMemcpy(dt, tiled.data(), wbytes, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(dc, cmajor.data(), wbytes, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(da, av.data(), k * 2, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(ds, sc.data(), sc.size() * 2, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemcpy(dz, ze.data(), ze.size() * 2, cudaMemcpyHostToDevice), "copy") &&
       Ok(cudaMemset(dout, 0xff, size_t{4} * n * 2), "poison");
  const auto launch = [&](int f) {
    bf16* out = dout + static_cast<size_t>(f) * n;
    if (f == kLean) Probe<S, 4, kLean><<<tiles, 32 * S>>>(da, dt, ds, dz, out, n, k);
    if (f == kChunkMajor) Probe<S, 4, kChunkMajor><<<tiles, 32 * S>>>(da, dc, ds, dz, out, n, k);
    if (f == kFourChains) Probe<S, 4, kFourChains><<<tiles, 32 * S>>>(da, dt, ds, dz, out, n, k);
    if (f == kAAhead) Probe<S, 4, kAAhead><<<tiles, 32 * S>>>(da, dt, ds, dz, out, n, k);
  };
  std::vector<uint16_t> out(size_t{4} * n);
  if (ok) {
    for (int f = 0; f < 4; ++f) launch(f);
    ok = Ok(cudaDeviceSynchronize(), "forms") &&
         Ok(cudaMemcpy(out.data(), dout, out.size() * 2, cudaMemcpyDeviceToHost), "copy back");
  }
  for (int f = 0; ok && f < 4; ++f) {
    double err = 0;
    for (int r = 0; r < n; ++r) err = std::max(err, std::fabs(Bf16ToFloat(out[static_cast<size_t>(f) * n + r]) - ref[r]));
    // One bf16 rounding of the largest output, with room for f32 sums in another order.
    if (!(err <= ref_max * std::ldexp(1.0, -7))) {
      std::printf("1 x %d x %d %s: max error %.4g against the fp64 reference (largest output %.4g): FAILED\n", n, k,
                  kFormNames[f], err, ref_max);
      ok = false;
    }
  }
  if (ok && std::memcmp(out.data(), out.data() + n, static_cast<size_t>(n) * 2) != 0) {
    std::printf("1 x %d x %d: lean and chunk-major differ (the same sums should give the same bits): FAILED\n", n, k);
    ok = false;
  }
  if (ok) {
    float t[2][5];
    for (int round = 0; round < 2; ++round) {
      t[round][0] = ColdMedianUs([&] { ReadAll<<<132 * 8, 256>>>(dt, wbytes / 16, reinterpret_cast<int*>(b.flush)); },
                                 b.flush, b.flush_bytes);
      for (int f = 0; f < 4; ++f) t[round][f + 1] = ColdMedianUs([&] { launch(f); }, b.flush, b.flush_bytes);
    }
    ok = Ok(cudaGetLastError(), "timing");
    if (ok)
      std::printf("| 1 x %d x %d | %d | %.1f | %.2f, %.2f | %.2f, %.2f | %.2f, %.2f | %.2f, %.2f | %.2f, %.2f |\n", n,
                  k, S, wbytes / 1e6, t[0][0], t[1][0], t[0][1], t[1][1], t[0][2], t[1][2], t[0][3], t[1][3],
                  t[0][4], t[1][4]);
  }
  cudaFree(dt), cudaFree(dc), cudaFree(da), cudaFree(ds), cudaFree(dz), cudaFree(dout);
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
  std::printf("| M x N x K | warps a tile | weights MB | read | lean | chunk-major | 4 chains | A ahead |\n");
  std::printf("| --- | ---: | ---: | --- | --- | --- | --- | --- |\n");
  bool ok = RunShape<2>(14336, 4096, b);
  ok = RunShape<8>(4096, 14336, b) && ok;
  ok = RunShape<8>(4096, 4096, b) && ok;
  cudaFree(b.flush);
  return ok ? 0 : 1;
}
