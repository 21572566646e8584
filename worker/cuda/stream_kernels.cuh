// The calibration's own kernels: memory streams per traffic mix (16-byte accesses, grid-stride, four
// accesses in flight per thread), an L2-resident read, and f32 FMA and SFU (exp2) peaks. Each
// launches on `stream` and returns cudaGetLastError(). A stream's ceiling is the best of a few launch
// shapes: which one a DRAM system prefers differs (a grid-stride loop over resident blocks, or one
// access per thread over a grid as large as the buffer, as simple elementwise kernels do).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kbench::worker {

struct StreamShape {
  unsigned blocks = 0;
  int threads = 0;
};
// The shapes each stream is timed with, for `sms` SMs and a buffer of `bytes`: 4 blocks of 512 per
// SM, 2048 blocks of 256, and one 16-byte access per thread.
inline constexpr int kStreamShapes = 3;
StreamShape StreamShapeOf(int index, int sms, size_t bytes);

// Reads `bytes` of a (a multiple of 16); `sink` is written only on an impossible value.
cudaError_t LaunchReadStream(cudaStream_t stream, StreamShape shape, const void* a, size_t bytes, int* sink);
cudaError_t LaunchWriteStream(cudaStream_t stream, StreamShape shape, void* a, size_t bytes);
// b = a: bytes read + bytes written.
cudaError_t LaunchCopyStream(cudaStream_t stream, StreamShape shape, const void* a, void* b, size_t bytes);
// c = a + b (int lanes): 2 x bytes read + bytes written.
cudaError_t LaunchTriadStream(cudaStream_t stream, StreamShape shape, const void* a, const void* b, void* c,
                              size_t bytes);
// Reads `bytes` of a `passes` times, through the L2 only (ld.global.cg: L1 would serve the rereads).
cudaError_t LaunchL2ReadStream(cudaStream_t stream, int sms, const void* a, size_t bytes, int passes, int* sink);

// The FMA and exp2 loops: kPeakChains independent chains per thread, `iterations` each, over
// kPeakThreads threads per block. FLOPs = 2 x FMAs; exp2 ops counted one each.
inline constexpr int kPeakChains = 8;
inline constexpr int kPeakThreads = 512;
cudaError_t LaunchFmaPeak(cudaStream_t stream, int sms, int iterations, float* sink);
cudaError_t LaunchSfuPeak(cudaStream_t stream, int sms, int iterations, float* sink);
// Threads a peak kernel runs: sms x 4 blocks x kPeakThreads.
inline double PeakThreads(int sms) { return 4.0 * sms * kPeakThreads; }

}  // namespace kbench::worker
