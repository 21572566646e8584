// The pipelined block-per-row plan (rmsnorm cuda_v6_pipelined, softmax cuda_v4_block_pipelined,
// layernorm cuda_v3_pipelined). With one row per block a block loads its row, then stalls on its
// reductions and stores with nothing in flight, then exits. Here a block stays resident for many
// rows and loads row i+1 while it reduces and writes row i, keeping rows as the raw 16-byte words
// it loaded (bf16 is half the registers of floats). Measured on an H200 at 32768x4096 bf16 this
// lifted softmax from 72% (warp per row, 195 registers) to 82% and layernorm from 77% to 85% of
// copy bandwidth, and left rmsnorm where v5 is (88%): one row ahead a block is too few bytes in
// flight. ForEachRowRing keeps rows ahead in shared memory instead: rmsnorm 88% -> 90-91% of copy
// with 3 rows ahead, and kStages (kRingStages = 4) rows ahead since a slot refills as soon as its row
// is in registers (below; the numbers are in kernels/reduction/README.md).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
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

// The same walk with the next rows in a shared-memory ring instead of registers: cp.async copies rows
// r + gridDim.x .. r + (kStages - 1) * gridDim.x into row slots while row r is reduced and written, and
// a slot is refilled (row r + kStages * gridDim.x) as soon as its row is in registers, before that row
// is reduced: kStages rows a block in flight through the row's work, where refilling the previous
// row's slot at the top of the next iteration kept kStages - 1 (H200, 32768x4096 bf16: softmax v6
// 137.7-138.6 against 139.9-140.3 us, layernorm v4 140.5-141.1 against 142.2-143.1, rmsnorm v7
// 137.1-137.6 against 138.2-138.7). Each thread copies and later reads only its own packs (slot layout
// [stage][j][threadIdx.x]: conflict-free 16-byte accesses), so cp.async.wait_group alone orders a copy
// before its read and no barrier is needed; a refill follows this thread's own reads of its slot in
// program order, and its data lands only after a round trip to global memory.
// Needs RingBytes(kStages, kPacks, blockDim.x) bytes of dynamic shared memory.
template <typename T, int kPacks, int kStages, typename Row>
__device__ __forceinline__ void ForEachRowRing(const T* x, int64_t rows, int64_t cols, int packs, Row&& row) {
  static_assert(kStages >= 2 && kStages <= 8, "cp.async.wait_group takes kStages - 1 as an immediate");
  extern __shared__ __align__(16) uint4 ring[];
  const int tid = threadIdx.x, nthreads = blockDim.x;
  const auto issue = [&](int64_t r, int stage) {
    if (r < rows) {
      const uint4* src = reinterpret_cast<const uint4*>(x + r * cols);
#pragma unroll
      for (int j = 0; j < kPacks; ++j) {
        const int idx = tid + j * nthreads;
        if (idx < packs) {
          const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(ring + (stage * kPacks + j) * nthreads + tid));
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src + idx) : "memory");
        }
      }
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");  // one group per row, empty or not
  };
  const int64_t step = gridDim.x;
  int64_t r = blockIdx.x;
#pragma unroll
  for (int k = 0; k < kStages; ++k) issue(r + k * step, k);
  for (int stage = 0; r < rows; r += step, stage = stage + 1 == kStages ? 0 : stage + 1) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1) : "memory");  // row r's group is complete
    uint4 cur[kPacks];
#pragma unroll
    for (int j = 0; j < kPacks; ++j)
      if (tid + j * nthreads < packs) cur[j] = ring[(stage * kPacks + j) * nthreads + tid];
    issue(r + kStages * step, stage);
    row(r, cur);
  }
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");  // the empty tail groups
}

// The pipelined kernels' row walk: kStages 0 holds the next row in registers (ForEachRowPipelined),
// kStages >= 2 in the shared-memory ring (ForEachRowRing).
template <typename T, int kPacks, int kStages, typename Row>
__device__ __forceinline__ void ForEachRowStaged(const T* x, int64_t rows, int64_t cols, int packs, Row&& row) {
  if constexpr (kStages == 0) ForEachRowPipelined<T, kPacks>(x, rows, cols, packs, row);
  else ForEachRowRing<T, kPacks, kStages>(x, rows, cols, packs, row);
}

// Rows kept in flight by the ring rungs (rmsnorm v7, softmax v5, layernorm v4): kRingStages rows a
// block; with 8 KB rows and 6 blocks an SM that is ~192 KB in flight per SM, several times what
// latency x bandwidth asks for, where the register pipeline held about one row a block.
inline constexpr int kRingStages = 4;

inline int64_t RingBytes(int stages, int packs, int threads) {
  return static_cast<int64_t>(stages) * packs * threads * static_cast<int64_t>(sizeof(uint4));
}

// v, with the compiler told nothing about it: widening row-invariant raw packs through this keeps
// them 4 registers a pack (left alone, ptxas hoists the widened floats out of the row loop: twice
// the registers, and for layernorm 112 a thread, 4 blocks an SM where the ring allows 6).
__device__ __forceinline__ uint4 Opaque(uint4 v) {
  asm volatile("" : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w));
  return v;
}

// Calls f(j, p, v) for each pack this thread holds of a row: j its slot in this thread (0 ..
// kPacks-1, for per-slot state such as row-invariant weights LoadRawPacks put in registers once per
// kernel), p the pack's index in the row, v its values widened to floats (f may change them, e.g.
// to store them).
template <typename T, int kPacks, typename F>
__device__ __forceinline__ void ForEachPackSlot(const uint4 (&raw)[kPacks], int packs, F&& f) {
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int p = threadIdx.x + j * blockDim.x;
    if (p < packs) {
      float v[kVec16<T>];
      WidenPack<T>(raw[j], v);
      f(j, p, v);
    }
  }
}

// The same with f(p, v), for the passes that need no per-slot state.
template <typename T, int kPacks, typename F>
__device__ __forceinline__ void ForEachPack(const uint4 (&raw)[kPacks], int packs, F&& f) {
  ForEachPackSlot<T>(raw, packs, [&](int, int p, float(&v)[kVec16<T>]) { f(p, v); });
}

// One pack folded by a tree (log2 kW dependent steps instead of kW): the per-row loops of the
// pipelined kernels stay short dependency chains, which is what their warps otherwise stall on.
template <int kW, typename Op>
__device__ __forceinline__ float PackReduce(const float (&v)[kW], Op op) {
  float t[kW];
#pragma unroll
  for (int i = 0; i < kW; ++i) t[i] = v[i];
#pragma unroll
  for (int w = kW / 2; w >= 1; w /= 2)
#pragma unroll
    for (int i = 0; i < w; ++i) t[i] = op(t[i], t[i + w]);
  return t[0];
}

// Packs a pipelined kernel keeps per thread per row: the threads of PlanRow, at most 4 packs (16
// registers a row buffer, two buffers); 0 when the row does not fit that way (the caller falls back).
inline int PipelinePacks(int64_t cols, int vec_width, bool vec_ok, int* threads) {
  const RowPlan plan = PlanRow(cols, vec_width, vec_ok);
  if (plan.width != vec_width) return 0;  // odd width or unaligned: scalar accesses
  *threads = plan.threads;
  return plan.packs <= 4 ? plan.packs : 0;  // 0 also when PlanRow keeps nothing in registers
}

// A pipelined kernel instantiated for one row geometry: kThreads threads a block, each holding
// exactly kPacks packs of a row (cols == kThreads * kPacks * kW). It calls this first and uses the
// returned width: told blockDim.x and the width, the compiler folds every pack predicate and turns
// pack offsets into immediates, where the any-geometry instantiation (kThreads 0, width `cols`)
// computes and tests them for each pack of each row. At 4096 bf16 columns (sm_90a SASS, whole
// kernel): softmax v6 824 -> 560 instructions, layernorm v4 952 -> 584, rmsnorm v7 728 -> 440.
template <int kPacks, int kThreads, int kW>
__device__ __forceinline__ int64_t RowCols(int64_t cols) {
  if constexpr (kThreads == 0) {
    return cols;
  } else {
    __builtin_assume(blockDim.x == kThreads);
    __builtin_assume(threadIdx.x < kThreads);
    return int64_t{kThreads} * kPacks * kW;
  }
}

// Blocks an SM a fixed-geometry ring instantiation is compiled to fit (its __launch_bounds__
// minimum): as many as the ring's shared memory allows (227 KB an SM, 1 KB reserved a block; 6
// blocks of 128 threads at 4 stages of 8 KB rows), so registers never become the tighter limit; the
// kernel's static shared memory must fit in the slack (softmax v6: 9 blocks at 3 stages). 0
// (no minimum) for the register pipeline (kStages 0), whose two row buffers need more.
template <int kThreads, int kStages, int kPacks = 4>
constexpr int FixedMinBlocks() {
  return kThreads == 0 || kStages == 0 ? 0 : (227 * 1024) / (kStages * kPacks * kThreads * 16 + 1024);
}

// The instantiation of a pipelined kernel for a row of `cols` elements: pick(kPacks, kThreads) with
// std::integral_constant arguments, kThreads 0 (any geometry) unless the row fills 4 packs a thread
// exactly at 128 or 256 threads (bf16 4096 and 8192, f32 2048 and 4096 columns); nullptr when the
// row does not fit PipelinePacks' plan. *threads and *packs get the plan.
template <typename Pick>
auto PickPipelined(int64_t cols, int width, bool vec_ok, int* threads, int* packs, Pick&& pick) {
  using I1 = std::integral_constant<int, 1>;
  using I2 = std::integral_constant<int, 2>;
  using I4 = std::integral_constant<int, 4>;
  using I0 = std::integral_constant<int, 0>;
  *packs = PipelinePacks(cols, width, vec_ok, threads);
  const bool exact = int64_t{*threads} * *packs * width == cols;
  switch (*packs) {
    case 1: return pick(I1{}, I0{});
    case 2: return pick(I2{}, I0{});
    case 4:
      if (exact && *threads == 128) return pick(I4{}, std::integral_constant<int, 128>{});
      if (exact && *threads == 256) return pick(I4{}, std::integral_constant<int, 256>{});
      return pick(I4{}, I0{});
    default: return decltype(pick(I1{}, I0{})){};
  }
}

// Grid of a pipelined kernel: as many blocks as fit on the device at once (each then walks rows
// blockIdx.x, + gridDim.x, ...), never more than there are rows. Host calls that enqueue nothing, so
// legal while a stream is captured into a graph.
inline unsigned PipelineGrid(const void* kernel, int threads, int64_t rows, int64_t dynamic_smem = 0) {
  return static_cast<unsigned>(
      std::clamp<int64_t>(ResidentBlocks(kernel, threads, static_cast<size_t>(dynamic_smem)), 1, rows));
}

}  // namespace kbench::kernels::cuda

namespace kbench::kernels::cuda {

// Launches a pipelined kernel whose ring has `stages` rows (0: the register pipeline, no ring) on
// PipelineGrid's grid, with the ring's dynamic shared memory. The opt-in (cudaFuncSetAttribute)
// enqueues nothing, so this is legal during capture.
template <typename... Params, typename... Args>
int LaunchRing(void (*kernel)(Params...), int stages, int threads, int packs, int64_t rows, cudaStream_t stream,
               Args... args) {
  const int64_t smem = stages == 0 ? 0 : RingBytes(stages, packs, threads);
  if (smem > 0) {
    if (cudaError_t e = AllowDynamicSmem(reinterpret_cast<const void*>(kernel), static_cast<size_t>(smem));
        e != cudaSuccess)
      return static_cast<int>(e);
  }
  kernel<<<PipelineGrid(reinterpret_cast<const void*>(kernel), threads, rows, smem), threads, static_cast<size_t>(smem),
           stream>>>(args...);
  KB_LAUNCH_CHECK();
  return 0;
}

// The same with the ring depth a template argument (kStages 0: registers; else the ring).
template <int kStages, typename... Params, typename... Args>
int LaunchPipelined(void (*kernel)(Params...), int threads, int packs, int64_t rows, cudaStream_t stream,
                    Args... args) {
  return LaunchRing(kernel, kStages, threads, packs, rows, stream, args...);
}

}  // namespace kbench::kernels::cuda
