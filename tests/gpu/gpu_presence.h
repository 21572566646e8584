// Whether a GPU test runs, skips or fails. It skips only when this host shows no GPU at all (no
// NVIDIA driver device node and CUDA finds no device); a GPU the driver shows but CUDA cannot use,
// or any error starting a backend or runner once a GPU is there, is a failure. KBENCH_REQUIRE_GPU=1
// (set by `make test-gpu` and tests/gpu/run-on-gpu.sh) makes "no GPU" a failure too: on a GPU host a
// skip would hide a broken setup.
#pragma once

#include <string>

#include "gtest/gtest.h"

namespace kbench::gpu_test {

enum class GpuState { kUsable, kAbsent, kBroken };

// The decision, from what CUDA said and what the host shows (pure, for the unit test):
// cuda_error is cudaGetDeviceCount's return (0: success), device_count what it counted,
// driver_visible whether the NVIDIA driver shows a device node (/dev/nvidiactl or /dev/nvidia0).
GpuState ClassifyGpu(int cuda_error, int device_count, bool driver_visible);

// ClassifyGpu on this process's CUDA runtime and this host, computed once; *why says what CUDA said.
GpuState ProbeGpu(std::string* why);

// KBENCH_REQUIRE_GPU=1 in the environment.
bool GpuRequired();

// "" when the test may go on; otherwise why it must skip (skip = true) or fail (skip = false).
std::string GpuVerdict(bool* skip);

}  // namespace kbench::gpu_test

// At the top of a GPU test body or SetUp(): returns from it with GTEST_SKIP or FAIL as above.
#define KBENCH_REQUIRE_GPU_OR_SKIP()                                    \
  do {                                                                  \
    bool kbench_gpu_skip_ = false;                                      \
    const std::string kbench_gpu_why_ = ::kbench::gpu_test::GpuVerdict(&kbench_gpu_skip_); \
    if (!kbench_gpu_why_.empty()) {                                     \
      if (kbench_gpu_skip_) GTEST_SKIP() << kbench_gpu_why_;            \
      FAIL() << kbench_gpu_why_;                                        \
    }                                                                   \
  } while (0)
