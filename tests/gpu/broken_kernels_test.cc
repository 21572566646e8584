// The test-only broken variants misbehave as documented, each in a child process (a gtest death test
// re-executes this binary, so the child gets its own CUDA context and the parent's stays usable):
// the out-of-bounds writer ends in cudaErrorIllegalAddress, the hanging kernel is still running
// after two seconds. The worker's isolation tests rely on both behaviours.
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "broken_kernels.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

const Variant& Broken(const std::string& name) {
  static const std::vector<Variant> variants = BrokenCudaVariants();
  for (const Variant& v : variants)
    if (v.name == name) return v;
  throw std::runtime_error("no broken variant " + name);
}

// In the child: allocates vector_add's three tensors for N = 4096 f32 and starts the variant.
cudaStream_t StartInChild(const Variant& v) {
  const OpDef& op = *BuiltinRegistry().Find("vector_add");
  const Problem p = MakeProblem(op, {4096}, Dtype::kF32);
  std::vector<Tensor> t(3);
  for (auto& x : t) {
    x = Tensor{nullptr, 4096, Dtype::kF32};
    if (cudaMalloc(&x.data, 4096 * sizeof(float)) != cudaSuccess) _exit(10);
    if (cudaMemset(x.data, 0, 4096 * sizeof(float)) != cudaSuccess) _exit(11);
  }
  cudaStream_t s = nullptr;
  if (cudaStreamCreate(&s) != cudaSuccess) _exit(12);
  const int rc = v.run_cuda(p, t, s);
  if (rc != 0) {
    std::fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(static_cast<cudaError_t>(rc)));
    _exit(13);
  }
  return s;
}

TEST(BrokenKernels, ExposedButNotRegistered) {
  const std::vector<Variant> variants = BrokenCudaVariants();
  ASSERT_EQ(variants.size(), 2u);
  for (const Variant& v : variants) {
    EXPECT_EQ(BuiltinRegistry().Find("vector_add")->find_variant(v.name), nullptr) << v.name;
    EXPECT_TRUE(v.run_cuda && v.launches && v.skip_reason);
  }
}

TEST(BrokenKernels, OutOfBoundsWriteFaults) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        cudaStream_t s = StartInChild(Broken("cuda_broken_oob_write"));
        const cudaError_t e = cudaStreamSynchronize(s);
        std::fprintf(stderr, "sync: %s\n", cudaGetErrorName(e));
        _exit(e == cudaErrorIllegalAddress ? 3 : 4);
      },
      ::testing::ExitedWithCode(3), "cudaErrorIllegalAddress");
}

TEST(BrokenKernels, HangKeepsRunning) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        cudaStream_t s = StartInChild(Broken("cuda_broken_hang"));
        std::this_thread::sleep_for(std::chrono::seconds(2));
        const cudaError_t e = cudaStreamQuery(s);
        std::fprintf(stderr, "after 2 s: %s\n", e == cudaErrorNotReady ? "still running" : cudaGetErrorName(e));
        // Leave without tearing CUDA down: ending the process is what ends the kernel.
        _exit(e == cudaErrorNotReady ? 5 : 6);
      },
      ::testing::ExitedWithCode(5), "still running");
}

}  // namespace
}  // namespace kbench::kernels::testing
