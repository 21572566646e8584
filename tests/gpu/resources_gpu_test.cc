// Kernel resources as a result reports them (worker/cuda/resources.h), read before the kernel's first
// launch as the pipeline does: cuda_mma_sync's kernel takes 144-192 KiB of dynamic shared memory
// (over the 48 KiB a function gets until it opts in) and its theoretical occupancy must not read 0;
// and every kernel every CUDA variant of the suite describes, on its op's ci problems, has an
// occupancy in (0, 1]. Nothing in this binary launches a kernel before these run.
#include <cuda_runtime.h>

#include "core/registry.h"
#include "gpu_presence.h"
#include "gtest/gtest.h"
#include "worker/cuda/resources.h"

namespace kbench::worker {
namespace {

TEST(KernelResources, OccupancyCountsOptedInDynamicSharedMemory) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const kernels::OpDef& gemm = *kernels::BuiltinRegistry().Find("gemm");
  const kernels::Variant* v = gemm.find_variant("cuda_mma_sync");
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(v->launches);
  const kernels::Problem p = kernels::MakeProblem(gemm, {4096, 4096, 4096}, kernels::Dtype::kBF16);
  const std::vector<kernels::LaunchInfo> launches = v->launches(p);
  ASSERT_EQ(launches.size(), 1u);
  ASSERT_GT(launches[0].dynamic_shared_bytes, 48 * 1024) << "the case under test: over the default limit";
  const std::vector<v1::KernelResources> r = KernelResourcesOf(launches, 0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].dynamic_shared_bytes(), launches[0].dynamic_shared_bytes);
  EXPECT_GT(r[0].registers_per_thread(), 0);
  EXPECT_GT(r[0].theoretical_occupancy(), 0) << r[0].kernel_name();
  EXPECT_LE(r[0].theoretical_occupancy(), 1);
}

TEST(KernelResources, EveryDescribedKernelOfTheSuiteHasOccupancy) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  int major = 0, minor = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), cudaSuccess);
  int checked = 0;
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops()) {
    const kernels::Preset* ci = op.find_preset("ci");
    if (ci == nullptr) continue;  // the test-only ops
    for (const kernels::Variant& v : op.variants) {
      if (v.backend != kernels::Backend::kCuda || !v.launches || v.dtypes.empty() ||
          v.min_compute_capability > major * 10 + minor)
        continue;
      for (kernels::Problem p : ci->problems) {
        p.dtype = v.supports(kernels::Dtype::kBF16) ? kernels::Dtype::kBF16 : v.dtypes.front();
        if (v.skip_reason && !v.skip_reason(p).empty()) continue;
        const std::vector<kernels::LaunchInfo> launches = v.launches(p);
        const std::vector<v1::KernelResources> r = KernelResourcesOf(launches, 0);
        ASSERT_EQ(r.size(), launches.size());
        for (size_t i = 0; i < r.size(); ++i) {
          if (!launches[i].func || launches[i].block_threads <= 0) continue;
          SCOPED_TRACE(op.name + " " + v.name + " " + p.label() + " " + r[i].kernel_name());
          EXPECT_GT(r[i].theoretical_occupancy(), 0);
          EXPECT_LE(r[i].theoretical_occupancy(), 1);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace kbench::worker
