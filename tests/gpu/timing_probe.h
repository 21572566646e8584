// Probe kernels for the timing tests (tests/gpu/harness_gpu_test.cc): what a CUDA-event window
// holds besides the kernel. Test-only; never in the worker.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kbench::gpu_test {

// A kernel that does nothing, over `blocks` x `threads`.
cudaError_t LaunchEmpty(cudaStream_t stream, int blocks, int threads);
// One thread spins for `ns` on %globaltimer and writes its own start and end there (out[0], out[1]).
cudaError_t LaunchTimedSpin(cudaStream_t stream, uint64_t ns, unsigned long long* out);
// Every thread of blocks x threads spins `ns`; the grid's first start and last end (%globaltimer)
// go to out[0], out[1], which LaunchResetStamps sets up (min, max) before.
cudaError_t LaunchGridTimedSpin(cudaStream_t stream, int blocks, int threads, uint64_t ns, unsigned long long* out);
cudaError_t LaunchResetStamps(cudaStream_t stream, unsigned long long* out);
// The smallest non-zero step of %globaltimer seen over many reads, into *out.
cudaError_t LaunchTimerResolution(cudaStream_t stream, unsigned long long* out);

}  // namespace kbench::gpu_test
