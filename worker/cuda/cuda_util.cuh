// Small device-side utilities of the CUDA backend: the launch-latency spin, the L2 flush, and a
// seeded fill for calibration inputs.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kbench::worker {

// Busy-waits on the GPU for `ns` nanoseconds, so the launches queued behind it are already in the
// hardware queue when the timed window opens: host launch latency stays out of the measurement.
cudaError_t LaunchSpin(cudaStream_t stream, uint64_t ns);

// Reads `bytes` of `buffer` (16-byte loads that skip L1): at twice the L2 size the data the next
// kernel reads is no longer in L2; any read of L2 size evicts (and writes back) dirty lines.
cudaError_t FlushL2(cudaStream_t stream, void* buffer, size_t bytes);

// Seeded uniform values in [-1, 1) as f32 / bf16 / f16 / fp8 e4m3 (kind 0..3), never all zeros.
cudaError_t FillRandom(cudaStream_t stream, void* data, size_t count, int kind, uint64_t seed);

}  // namespace kbench::worker
