// Device scratch memory owned by a variant (the temporaries of an unfused ladder rung, the block
// partials of a two-pass reduction). One buffer per (device, slot), allocated on first use and grown
// when a larger problem needs more, then reused: no allocation inside a timed run after the first
// (correctness) run of a problem size. It is not part of the op's tensors, so the cost model does not
// count its traffic, which is the point of an unfused rung. Held for the life of the process.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace kbench::kernels::cuda {

enum class WorkspaceSlot : int {
  kSiluMulBiasTmp = 0,      // silu_mul_bias cuda_v1_unfused: the rows x cols intermediate
  kReduceSumPartials = 1,   // reduce_sum cuda_v2_two_pass: one float per block of the first pass
  kGemvSplitKCounters = 2,  // gemm cuda_gemv_split_k: arrival counters, left at zero by every launch
  kGemvSplitKPartials = 3,  // gemm cuda_gemv_split_k: one float per (split, row, column)
  kAttentionScores = 4,     // attention cuda_v1_naive: the B*H x N_q x N_kv score (then probability) matrix
  kAttentionTileCounter = 5,  // attention cuda_v4_flash_wgmma, persistent: next tile and blocks done, left at zero
  kPagedDecodePartials = 8, // paged_decode split-KV rungs: (max, sum, out row) per (sequence, head, split)
  kPagedDecodeCounters = 9, // paged_decode cuda_v4_gqa_mma: splits done per (sequence, head block), left at zero

  kQuantIntermediate = 16,  // rmsnorm_fp8_quant, silu_mul_fp8_quant cuda_v1_unfused: the bf16 rows

  kW4a16Dequantized = 24,   // w4a16_gemm cuda_v1_dequant_then_gemm: the bf16 [N, K] weights
  kW4a16SplitKPartials = 25,  // w4a16_gemm cuda_v4_mma_gemv, K split: one float per (split, row of A, weight row)
  kW4a16SplitKCounters = 26,  // w4a16_gemm cuda_v4_mma_gemv, K split: arrivals per row block, left at zero
};

// Sets *ptr to at least `bytes` of device memory of the current device for `slot`, zero-filled when
// it is (re)allocated, contents kept otherwise. Growing it
// synchronizes the device (an old buffer may still be in use) and is refused while `stream` is being
// captured into a graph: run the problem once outside capture first.
inline cudaError_t GetWorkspace(WorkspaceSlot slot, size_t bytes, cudaStream_t stream, void** ptr) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
  };
  static std::mutex mu;
  // Never destroyed: freeing at process exit would race the driver's own teardown.
  static auto* buffers = new std::map<std::pair<int, int>, Buffer>();
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(mu);
  Buffer& b = (*buffers)[{device, static_cast<int>(slot)}];
  if (b.bytes >= bytes && b.data != nullptr) {
    *ptr = b.data;
    return cudaSuccess;
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (const cudaError_t e = cudaStreamIsCapturing(stream, &capture); e != cudaSuccess) return e;
  if (capture != cudaStreamCaptureStatusNone) return cudaErrorStreamCaptureUnsupported;
  if (b.data != nullptr) {
    if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return e;
    if (const cudaError_t e = cudaFree(b.data); e != cudaSuccess) return e;
    b = Buffer{};
  }
  const size_t want = bytes == 0 ? 16 : bytes;
  if (const cudaError_t e = cudaMalloc(&b.data, want); e != cudaSuccess) {
    b = Buffer{};
    return e;
  }
  // Zeroed once: users that keep counters in their workspace (and reset them) start from zero. The
  // memset runs on the legacy stream, which the caller's (typically non-blocking) stream does not
  // wait for: finish it here, before the first kernel that counts.
  if (const cudaError_t e = cudaMemset(b.data, 0, want); e != cudaSuccess) return e;
  if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return e;
  b.bytes = want;
  *ptr = b.data;
  return cudaSuccess;
}

}  // namespace kbench::kernels::cuda
