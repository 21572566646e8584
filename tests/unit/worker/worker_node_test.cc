// WorkerNode with several devices: one lease per device at once, a third refused, devices and
// calibrations in WorkerInfo in order, cancel and shutdown reaching the right leases, and each
// device's runner stamping results with its own device.
#include "worker/agent/worker_node.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker {
namespace {

std::unique_ptr<Backend> CpuDevice(int index) {
  auto backend = std::make_unique<CpuBackend>(CpuBackendOptions{.device_index = index}, testing::TestHost());
  v1::Calibration c;
  c.set_device_uuid(backend->device().uuid());
  c.set_copy_bytes_per_second(1e10 * (index + 1));
  (*c.mutable_peak_flops_per_second())["f32"] = 1e11;
  backend->set_calibration(c);
  return backend;
}

std::unique_ptr<WorkerNode> TwoDeviceNode() {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(CpuDevice(0));
  backends.push_back(CpuDevice(1));
  return std::make_unique<WorkerNode>(WorkerConfig{.name = "two"}, std::move(backends), testing::TestRegistry());
}

TEST(WorkerNodeTest, TwoDevicesGiveTwoLeasesAtOnceAndRefuseAThird) {
  auto node = TwoDeviceNode();
  ASSERT_EQ(node->device_count(), 2);
  auto first = node->TryAcquireDevice();
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = node->TryAcquireDevice();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE((*first)->device_index(), (*second)->device_index());
  (*first)->set_job_id("job-a");

  auto third = node->TryAcquireDevice();
  EXPECT_TRUE(absl::IsResourceExhausted(third.status())) << third.status();
  auto busy = node->TryAcquireDevice((*first)->device_index());
  EXPECT_TRUE(absl::IsResourceExhausted(busy.status())) << busy.status();
  EXPECT_NE(busy.status().message().find("job-a"), std::string::npos) << busy.status();

  // Freeing one device makes exactly that one available again.
  const int freed = (*second)->device_index();
  second->reset();
  auto again = node->TryAcquireDevice();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->device_index(), freed);
}

TEST(WorkerNodeTest, AcquireByIndexChecksTheIndex) {
  auto node = TwoDeviceNode();
  auto one = node->TryAcquireDevice(1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)->device_index(), 1);
  auto zero = node->TryAcquireDevice();  // "any": the one left
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ((*zero)->device_index(), 0);
  EXPECT_TRUE(absl::IsOutOfRange(node->TryAcquireDevice(2).status()));
  EXPECT_TRUE(absl::IsOutOfRange(node->TryAcquireDevice(-1).status()));
}

TEST(WorkerNodeTest, InfoListsEveryDeviceWithItsCalibrationInOrder) {
  auto node = TwoDeviceNode();
  const v1::WorkerInfo info = node->Info();
  ASSERT_EQ(info.devices_size(), 2);
  ASSERT_EQ(info.calibrations_size(), 2);
  EXPECT_EQ(info.devices(0).uuid(), CpuDeviceUuid("test-host") + "-cpu0");
  EXPECT_EQ(info.devices(1).uuid(), CpuDeviceUuid("test-host") + "-cpu1");
  EXPECT_EQ(info.devices(1).index(), 1);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(info.calibrations(i).device_uuid(), info.devices(i).uuid());
  EXPECT_DOUBLE_EQ(info.calibrations(1).copy_bytes_per_second(), 2e10);
  EXPECT_GT(info.catalog_size(), 0);
}

TEST(WorkerNodeTest, CancelReachesOnlyTheNamedJobAndShutdownReachesAll) {
  auto node = TwoDeviceNode();
  auto a = node->TryAcquireDevice();
  auto b = node->TryAcquireDevice();
  ASSERT_TRUE(a.ok() && b.ok());
  (*a)->set_job_id("job-a");
  (*b)->set_job_id("job-b");
  node->CancelJob("job-b");
  EXPECT_FALSE((*a)->cancel().cancelled());
  EXPECT_TRUE((*b)->cancel().cancelled());
  node->Shutdown();
  EXPECT_TRUE((*a)->cancel().cancelled());
  EXPECT_TRUE(absl::IsUnavailable(node->TryAcquireDevice().status()));
  EXPECT_TRUE(absl::IsUnavailable(node->TryAcquireDevice(0).status()));
}

TEST(WorkerNodeTest, EachDevicesRunnerNamesItsOwnDeviceInResults) {
  auto node = TwoDeviceNode();
  v1::JobSpec spec;
  spec.set_op("scale");
  spec.add_variants("cpu_good");
  spec.add_problems()->set_preset("small");
  spec.add_dtypes(v1::DTYPE_F32);
  *spec.mutable_settings() = testing::TinySettings();
  for (int i = 0; i < node->device_count(); ++i) {
    std::vector<v1::Result> results;
    CancelFlag never;
    absl::Status s = node->runner(i).Run(spec, JobContext{.job_id = "j", .worker_id = "w", .attempt = 1}, never,
                                         [&](const v1::RunJobEvent& e) {
                                           if (e.has_result()) results.push_back(e.result());
                                         });
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].status(), v1::OK) << results[0].status_message();
    EXPECT_EQ(results[0].device().uuid(), node->backend(i).device().uuid());
  }
}

TEST(WorkerNodeTest, SingleDeviceFormKeepsTheHostUuid) {
  auto backend = std::make_unique<CpuBackend>(CpuBackendOptions{}, testing::TestHost());
  WorkerNode node(WorkerConfig{}, std::move(backend), testing::TestRegistry());
  EXPECT_EQ(node.device_count(), 1);
  EXPECT_EQ(node.Info().devices(0).uuid(), CpuDeviceUuid("test-host"));
  auto held = node.TryAcquireDevice();
  ASSERT_TRUE(held.ok());
  (*held)->set_job_id("x");
  auto refused = node.TryAcquireDevice();
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status()));
  EXPECT_NE(refused.status().message().find("'x'"), std::string::npos) << refused.status();
}

}  // namespace
}  // namespace kbench::worker
