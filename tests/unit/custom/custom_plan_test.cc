// The job runner's side of custom kernels: they run after the built-in variants of each problem (or
// exactly where spec.variants names them), and a backend outside a runner process answers SKIPPED.
#include "api/shape.h"
#include "core/registry.h"
#include "fake_backend.h"
#include "gtest/gtest.h"
#include "worker/runner/job_runner.h"

namespace kbench::worker {
namespace {

class CustomPlanTest : public ::testing::Test {
 protected:
  CustomPlanTest()
      : catalog_(kernels::BuiltinRegistry(), {kernels::Backend::kCpu, kernels::Backend::kCuda}),
        runner_(catalog_, backend_) {}

  static v1::JobSpec Spec() {
    v1::JobSpec spec;
    spec.set_op("vector_add");
    *spec.add_problems()->mutable_shape() = *api::ParseShape("N=64");
    spec.add_dtypes(v1::DTYPE_F32);
    spec.add_dtypes(v1::DTYPE_BF16);
    v1::CustomVariant* c = spec.add_custom_variants();
    c->set_name("mine");
    c->set_source("extern \"C\" __global__ void kbench_vector_add() {}");
    return spec;
  }

  Catalog catalog_;
  testing::FakeBackend backend_;
  JobRunner runner_;
};

TEST_F(CustomPlanTest, CustomVariantsFollowTheLadderOfEachProblem) {
  v1::JobSpec spec = Spec();
  spec.add_variants("cpu_naive");
  spec.add_variants("custom:mine");
  auto plan = runner_.Plan(spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->items.size(), 4u);  // (cpu_naive, custom:mine) x (f32, bf16)
  EXPECT_EQ(plan->items[0].custom_index, -1);
  EXPECT_EQ(plan->items[0].base.variant, "cpu_naive");
  EXPECT_EQ(plan->items[1].custom_index, 0);
  EXPECT_EQ(plan->items[1].base.variant, "custom:mine");  // the job's kernel, no built-in variant
  EXPECT_EQ(plan->items[3].custom_index, 0);

  std::vector<v1::Result> results;
  runner_.Run(*plan, {.job_id = "j", .worker_id = "w", .attempt = 1}, {}, [&](const v1::RunJobEvent& e) {
    if (e.has_result()) results.push_back(e.result());
  });
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1].variant(), "custom:mine");
  EXPECT_EQ(results[1].index(), 1);
  EXPECT_EQ(results[1].job_id(), "j");
  // The fake backend is not a runner process: custom code never runs in the worker itself.
  EXPECT_EQ(results[1].status(), v1::SKIPPED);
  EXPECT_NE(results[1].status_message().find("runner child process"), std::string::npos);
  EXPECT_EQ(backend_.measured, (std::vector<std::string>{"cpu_naive 64 f32", "cpu_naive 64 bf16"}));
}

TEST_F(CustomPlanTest, OnlyTheNamedCustomVariantWhenVariantsNameNoBuiltIn) {
  v1::JobSpec spec = Spec();
  spec.add_variants("custom:mine");
  auto plan = runner_.Plan(spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->items.size(), 2u);
  EXPECT_EQ(plan->items[0].custom_index, 0);
}

TEST_F(CustomPlanTest, AWorkerWithoutContractsRefusesCustomVariants) {
  const Catalog cpu_only(kernels::BuiltinRegistry(), {kernels::Backend::kCpu});
  JobRunner runner(cpu_only, backend_);
  auto plan = runner.Plan(Spec());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("takes no custom kernels"), absl::string_view::npos) << plan.status();
}

}  // namespace
}  // namespace kbench::worker
