// The registry as the catalog a worker advertises.
#include "worker/plan/catalog.h"

#include "api/message_bounds.h"
#include "core/registry.h"
#include "gtest/gtest.h"
#include "test_ops.h"

namespace kbench::worker {
namespace {

TEST(Catalog, CpuWorkerSeesOnlyCpuVariants) {
  const Catalog catalog(testing::TestRegistry(), {kernels::Backend::kCpu});
  ASSERT_EQ(catalog.ops().size(), 1u);
  const v1::OpInfo& op = catalog.ops()[0];
  EXPECT_EQ(op.name(), "scale");
  EXPECT_EQ(op.description(), "out = 2 x");
  ASSERT_EQ(op.dims_size(), 1);
  EXPECT_EQ(op.dims(0), "n");
  EXPECT_EQ(op.max_dim_value(), int64_t{1} << 20);
  ASSERT_EQ(op.variants_size(), 6);
  EXPECT_EQ(op.variants(0).name(), "cpu_good");
  EXPECT_EQ(op.variants(0).backend(), v1::BACKEND_CPU);
  for (const auto& v : op.variants()) EXPECT_NE(v.name(), "cuda_good");
  EXPECT_EQ(op.variants(5).name(), "cpu_f32");
  ASSERT_EQ(op.variants(5).dtypes_size(), 1);
  EXPECT_EQ(op.variants(5).dtypes(0), v1::DTYPE_F32);
  ASSERT_EQ(op.dtypes_size(), 2);
  EXPECT_EQ(op.dtypes(0), v1::DTYPE_F32);
  EXPECT_EQ(op.dtypes(1), v1::DTYPE_BF16);

  ASSERT_EQ(op.tensors_size(), 2);
  EXPECT_EQ(op.tensors(0).name(), "x");
  EXPECT_FALSE(op.tensors(0).is_output());
  EXPECT_TRUE(op.tensors(1).is_output());
  EXPECT_EQ(op.tensors(1).dims(0), "n");

  ASSERT_EQ(op.presets_size(), 2);
  EXPECT_EQ(op.presets(1).name(), "edge");
  ASSERT_EQ(op.presets(1).problems_size(), 2);
  const v1::Problem& p = op.presets(1).problems(1);
  ASSERT_EQ(p.dims_size(), 1);
  EXPECT_EQ(p.dims(0).name(), "n");
  EXPECT_EQ(p.dims(0).value(), 7);
  EXPECT_EQ(p.dtype(), v1::DTYPE_UNSPECIFIED);  // Runs for each requested dtype.

  EXPECT_NE(catalog.FindOp("scale"), nullptr);
  EXPECT_EQ(catalog.FindInfo("scale"), &catalog.ops()[0]);
  EXPECT_EQ(catalog.FindOp("gemm"), nullptr);
}

TEST(Catalog, CudaVariantsKeepTheirRequirements) {
  const v1::OpInfo op = ToOpInfo(testing::MakeScaleOp(), {kernels::Backend::kCuda});
  ASSERT_EQ(op.variants_size(), 1);
  EXPECT_EQ(op.variants(0).backend(), v1::BACKEND_CUDA);
  EXPECT_EQ(op.variants(0).min_compute_capability(), 80);
}

TEST(Catalog, DerivedAndZeroDimsReachTheCatalog) {
  kernels::OpDef op = testing::MakeScaleOp();
  op.dims.push_back("pairs");
  op.derived_dims = {{"pairs", "cdiv(n, 2)"}};
  op.zero_dims = {"n"};
  const v1::OpInfo info = ToOpInfo(op, {kernels::Backend::kCpu});
  ASSERT_EQ(info.derived_dims_size(), 1);
  EXPECT_EQ(info.derived_dims(0).name(), "pairs");
  EXPECT_EQ(info.derived_dims(0).expr(), "cdiv(n, 2)");
  ASSERT_EQ(info.zero_dims_size(), 1);
  EXPECT_EQ(info.zero_dims(0), "n");
  EXPECT_EQ(ToOpInfo(testing::MakeScaleOp(), {kernels::Backend::kCpu}).derived_dims_size(), 0);
}

TEST(Catalog, OpsWithoutVariantsForTheWorkerAreLeftOut) {
  kernels::Registry registry;
  kernels::OpDef op = testing::MakeScaleOp();
  std::erase_if(op.variants, [](const kernels::Variant& v) { return v.backend == kernels::Backend::kCpu; });
  registry.Add(op);
  EXPECT_TRUE(Catalog(registry, {kernels::Backend::kCpu}).ops().empty());
}

// The whole suite's catalog, as a CPU and as a CUDA worker registers it, within the registration's
// limits: an op with more dims, presets or tensors than the coordinator takes would leave every
// worker unregistered (paged_decode's nine dims once did).
TEST(Catalog, TheSuitesCatalogPassesTheRegistrationLimits) {
  for (auto backends : {std::set<kernels::Backend>{kernels::Backend::kCpu},
                        std::set<kernels::Backend>{kernels::Backend::kCpu, kernels::Backend::kCuda}}) {
    const Catalog catalog(kernels::BuiltinRegistry(), backends);
    v1::WorkerInfo info;
    info.set_worker_id("w-1");
    v1::DeviceInfo* d = info.add_devices();
    d->set_name("device");
    d->set_uuid("u-1");
    for (const v1::OpInfo& op : catalog.ops()) *info.add_catalog() = op;
    ASSERT_GT(info.catalog_size(), 8);
    const absl::Status s = api::CheckWorkerInfoBounds("info", info);
    EXPECT_TRUE(s.ok()) << s;
  }
}

}  // namespace
}  // namespace kbench::worker
