// The register-tiled fp64 GEMM tile the quantized GEMMs' device references share (w4a16_gemm,
// fp8_gemm): a 16 x 16 block computes 64 x 64 outputs, 4 x 4 a thread, from 16-deep shared-memory
// tiles of A's rows and B's rows that each op fills with its own dequantization. Register tiles
// because one output a thread with two shared loads an FMA took minutes at the prefill and 8192^3
// shapes (10^11 to 5 * 10^11 fp64 FMAs).
#pragma once

#include <cstdint>

namespace kbench::kernels::quant {

constexpr int kRefThreads = 16;                    // a block is 16 x 16 threads
constexpr int kRefMicro = 4;                       // each computing 4 x 4 elements of C
constexpr int kRefTile = kRefThreads * kRefMicro;  // 64 x 64 elements of C a block
constexpr int kRefK = 16;                          // k a shared-memory step

struct RefTiles {
  double a[kRefTile][kRefK + 1];  // [row of A][k]
  double b[kRefK][kRefTile + 1];  // [k][row of B]
};

// acc[i][j] += sum over the step's k of a[ty + 16 i][k] * b[k][tx + 16 j], in ascending k.
__device__ __forceinline__ void RefAccumulate(const RefTiles& s, int tx, int ty, double (&acc)[kRefMicro][kRefMicro]) {
#pragma unroll
  for (int q = 0; q < kRefK; ++q)
#pragma unroll
    for (int i = 0; i < kRefMicro; ++i)
#pragma unroll
      for (int j = 0; j < kRefMicro; ++j) acc[i][j] += s.a[ty + kRefThreads * i][q] * s.b[q][tx + kRefThreads * j];
}

// C[m0 + ty + 16 i][n0 + tx + 16 j] = factor * acc[i][j] inside the m x n matrix.
__device__ __forceinline__ void RefStore(const double (&acc)[kRefMicro][kRefMicro], double factor, double* c,
                                         int64_t m0, int64_t n0, int64_t m, int64_t n, int tx, int ty) {
#pragma unroll
  for (int i = 0; i < kRefMicro; ++i)
#pragma unroll
    for (int j = 0; j < kRefMicro; ++j) {
      const int64_t row = m0 + ty + kRefThreads * i, col = n0 + tx + kRefThreads * j;
      if (row < m && col < n) c[row * n + col] = factor * acc[i][j];
    }
}

}  // namespace kbench::kernels::quant
