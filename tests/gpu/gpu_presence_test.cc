// The GPU tests' skip rule (gpu_presence.h) on every case CUDA and the host can present, and
// KBENCH_REQUIRE_GPU=1 turning this host's "no GPU" into a failure. No GPU needed: label unit.
#include "gpu_presence.h"

#include <cuda_runtime.h>
#include <stdlib.h>

#include "gtest/gtest.h"

namespace kbench::gpu_test {
namespace {

TEST(GpuPresence, SkipsOnlyWhenNoGpuIsVisible) {
  EXPECT_EQ(ClassifyGpu(cudaSuccess, 1, true), GpuState::kUsable);
  EXPECT_EQ(ClassifyGpu(cudaSuccess, 8, false), GpuState::kUsable);
  EXPECT_EQ(ClassifyGpu(cudaErrorNoDevice, 0, false), GpuState::kAbsent);
  EXPECT_EQ(ClassifyGpu(cudaErrorInsufficientDriver, 0, false), GpuState::kAbsent);
  EXPECT_EQ(ClassifyGpu(cudaSuccess, 0, false), GpuState::kAbsent);
  // The driver shows a device but CUDA cannot use it (old driver, a device taken, a bad install).
  EXPECT_EQ(ClassifyGpu(cudaErrorNoDevice, 0, true), GpuState::kBroken);
  EXPECT_EQ(ClassifyGpu(cudaErrorInsufficientDriver, 0, true), GpuState::kBroken);
  EXPECT_EQ(ClassifyGpu(cudaSuccess, 0, true), GpuState::kBroken);
  // Any other error is a failure even where no driver node shows.
  EXPECT_EQ(ClassifyGpu(cudaErrorInitializationError, 0, false), GpuState::kBroken);
  EXPECT_EQ(ClassifyGpu(cudaErrorDevicesUnavailable, 0, false), GpuState::kBroken);
  EXPECT_EQ(ClassifyGpu(cudaErrorSystemDriverMismatch, 0, false), GpuState::kBroken);
}

TEST(GpuPresence, RequireGpuTurnsAnAbsentGpuIntoAFailure) {
  std::string why;
  const GpuState here = ProbeGpu(&why);
  bool skip = true;
  unsetenv("KBENCH_REQUIRE_GPU");
  const std::string relaxed = GpuVerdict(&skip);
  const bool relaxed_skip = skip;
  setenv("KBENCH_REQUIRE_GPU", "1", 1);
  const std::string required = GpuVerdict(&skip);
  const bool required_skip = skip;
  unsetenv("KBENCH_REQUIRE_GPU");
  switch (here) {
    case GpuState::kUsable:
      EXPECT_EQ(relaxed, "");
      EXPECT_EQ(required, "");
      break;
    case GpuState::kAbsent:
      EXPECT_TRUE(relaxed_skip) << relaxed;
      EXPECT_NE(relaxed.find("no GPU visible"), std::string::npos) << relaxed;
      EXPECT_FALSE(required_skip) << required;
      EXPECT_NE(required.find("KBENCH_REQUIRE_GPU=1 but no GPU is visible"), std::string::npos) << required;
      break;
    case GpuState::kBroken:
      EXPECT_FALSE(relaxed_skip) << relaxed;
      EXPECT_FALSE(required_skip) << required;
      EXPECT_NE(relaxed.find("CUDA cannot use it"), std::string::npos) << relaxed;
      break;
  }
}

}  // namespace
}  // namespace kbench::gpu_test
