// The calibration's own kernels: memory streams per traffic mix (16-byte accesses, grid-stride, four
// accesses in flight per thread), an L2-resident read, and f32 FMA and SFU (exp2) peaks. Each
// launches on `stream` over a grid of `sms` x 4 blocks and returns cudaGetLastError().
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kbench::worker {

// Reads `bytes` of a (a multiple of 16); `sink` is written only on an impossible value.
cudaError_t LaunchReadStream(cudaStream_t stream, int sms, const void* a, size_t bytes, int* sink);
cudaError_t LaunchWriteStream(cudaStream_t stream, int sms, void* a, size_t bytes);
// b = a: bytes read + bytes written.
cudaError_t LaunchCopyStream(cudaStream_t stream, int sms, const void* a, void* b, size_t bytes);
// c = a + b (int lanes): 2 x bytes read + bytes written.
cudaError_t LaunchTriadStream(cudaStream_t stream, int sms, const void* a, const void* b, void* c, size_t bytes);
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
