// The pipelined block-per-row plan (rmsnorm cuda_v6_pipelined, softmax cuda_v4_block_pipelined,
// layernorm cuda_v3_pipelined). With one row per block a block loads its row, then stalls on its
// reductions and stores with nothing in flight, then exits. Here a block stays resident for many
// rows and loads row i+1 while it reduces and writes row i, keeping rows as the raw 16-byte words
// it loaded (bf16 is half the registers of floats). Measured on an H200 at 32768x4096 bf16 this
// lifted softmax from 72% (warp per row, 195 registers) to 82% and layernorm from 77% to 85% of
// copy bandwidth, and left rmsnorm where v5 is (88%): what bounds it is not this.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/rows.cuh"
#include "core/cuda/vec.cuh"

namespace kbench::kernels::cuda {

// Raw 16-byte packs of row `row` (pack j of this thread: threadIdx.x + j * blockDim.x); packs past
// `packs` are left as they are. Streamed once: no L1 allocation.
template <int kPacks>
__device__ __forceinline__ void LoadRawPacks(const void* row, int packs, uint4 (&dst)[kPacks]) {
  const uint4* p = static_cast<const uint4*>(row);
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int idx = threadIdx.x + j * blockDim.x;
    if (idx < packs) {
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(dst[j].x), "=r"(dst[j].y), "=r"(dst[j].z), "=r"(dst[j].w)
                   : "l"(p + idx));
    }
  }
}

// Calls row(r, raw) for rows blockIdx.x, + gridDim.x, ... of x (rows x cols elements of T), raw being
// this thread's packs of row r; the loads of the block's next row are issued before row(r) runs, so
// they are in flight through its reductions and stores. blockIdx.x < rows (PipelineGrid).
template <typename T, int kPacks, typename Row>
__device__ __forceinline__ void ForEachRowPipelined(const T* x, int64_t rows, int64_t cols, int packs, Row&& row) {
  uint4 cur[kPacks], nxt[kPacks];
  int64_t r = blockIdx.x;
  LoadRawPacks<kPacks>(x + r * cols, packs, cur);
  for (; r < rows; r += gridDim.x) {
    const int64_t rn = r + gridDim.x;
    if (rn < rows) LoadRawPacks<kPacks>(x + rn * cols, packs, nxt);
    row(r, cur);
#pragma unroll
    for (int j = 0; j < kPacks; ++j) cur[j] = nxt[j];
  }
}

// Calls f(p, v) for each pack this thread holds of a row: p the pack's index in the row, v its values
// widened to floats (f may change them, e.g. to store them).
template <typename T, int kPacks, typename F>
__device__ __forceinline__ void ForEachPack(const uint4 (&raw)[kPacks], int packs, F&& f) {
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int p = threadIdx.x + j * blockDim.x;
    if (p < packs) {
      float v[kVec16<T>];
      WidenPack<T>(raw[j], v);
      f(p, v);
    }
  }
}

// Packs a pipelined kernel keeps per thread per row: the threads of PlanRow, at most 4 packs (16
// registers a row buffer, two buffers); 0 when the row does not fit that way (the caller falls back).
inline int PipelinePacks(int64_t cols, int vec_width, bool vec_ok, int* threads) {
  const RowPlan plan = PlanRow(cols, vec_width, vec_ok);
  if (plan.width != vec_width) return 0;  // odd width or unaligned: scalar accesses
  *threads = plan.threads;
  return plan.packs <= 4 ? plan.packs : 0;  // 0 also when PlanRow keeps nothing in registers
}

// Grid of a pipelined kernel: as many blocks as fit on the device at once (each then walks rows
// blockIdx.x, + gridDim.x, ...), never more than there are rows. Host calls that enqueue nothing, so
// legal while a stream is captured into a graph.
inline unsigned PipelineGrid(const void* kernel, int threads, int64_t rows) {
  int device = 0, sms = 1, per_sm = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0);
  return static_cast<unsigned>(std::clamp<int64_t>(static_cast<int64_t>(sms) * std::max(per_sm, 1), 1, rows));
}

}  // namespace kbench::kernels::cuda
