// LeaseJob for one device of a worker with several (LeaseJobRequest.device_uuid): the job's selector
// is matched against that device alone; an empty uuid matches any device, as before.
#include <memory>

#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// One worker with an H100 ("gpu-a") and an A100 ("gpu-b"), each with its calibration.
v1::WorkerInfo MixedWorker() {
  v1::WorkerInfo w = testing::CudaWorker("mixed", "NVIDIA H100 80GB HBM3", 9, 0, 80 * kGiB);
  w.mutable_devices(0)->set_uuid("gpu-a");
  v1::DeviceInfo* b = w.add_devices();
  *b = w.devices(0);
  b->set_name("NVIDIA A100-SXM4-80GB");
  b->set_compute_capability_major(8);
  b->set_uuid("gpu-b");
  for (const char* uuid : {"gpu-a", "gpu-b"}) {
    v1::Calibration* c = w.add_calibrations();
    c->set_device_uuid(uuid);
    c->set_copy_bytes_per_second(1e12);
  }
  return w;
}

class CoordinatorDeviceLeaseTest : public ::testing::Test {
 protected:
  CoordinatorDeviceLeaseTest() {
    auto store = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    config_.lease_ttl = std::chrono::milliseconds(1000);
    coordinator_ = std::make_unique<Coordinator>(config_, store_.get(), &clock_, nullptr);
    auto r = coordinator_->RegisterWorker(MixedWorker());
    EXPECT_TRUE(r.ok()) << r.status();
    worker_id_ = r.ok() ? r->worker_id : "";
  }

  std::string SubmitForModel(const std::string& model) {
    v1::JobSpec spec = testing::RmsnormSpec();
    spec.mutable_selector()->set_model(model);
    auto r = coordinator_->Submit(std::move(spec), "");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->job_id : "";
  }

  FakeClock clock_;
  CoordinatorConfig config_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::string worker_id_;
};

TEST_F(CoordinatorDeviceLeaseTest, ADeviceLeasesOnlyJobsItsOwnModelCanRun) {
  const std::string a100_job = SubmitForModel("a100");
  // The H100 asks first: the A100 job is not for it, though the worker as a whole matches.
  auto h100 = coordinator_->LeaseJob(worker_id_, "gpu-a");
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_FALSE(h100->granted);
  auto a100 = coordinator_->LeaseJob(worker_id_, "gpu-b");
  ASSERT_TRUE(a100.ok()) << a100.status();
  ASSERT_TRUE(a100->granted);
  EXPECT_EQ(a100->job.job_id(), a100_job);
}

TEST_F(CoordinatorDeviceLeaseTest, TwoDevicesOfOneWorkerHoldTwoLeasesAtOnce) {
  const std::string first = SubmitForModel("");
  const std::string second = SubmitForModel("");
  auto a = coordinator_->LeaseJob(worker_id_, "gpu-a");
  auto b = coordinator_->LeaseJob(worker_id_, "gpu-b");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->granted && b->granted);
  EXPECT_EQ(a->job.job_id(), first);
  EXPECT_EQ(b->job.job_id(), second);
  EXPECT_NE(a->lease_id, b->lease_id);
}

TEST_F(CoordinatorDeviceLeaseTest, AComputeCapabilitySelectorSkipsTheOlderDevice) {
  v1::JobSpec spec = testing::RmsnormSpec();
  spec.mutable_selector()->set_min_compute_capability(90);
  ASSERT_TRUE(coordinator_->Submit(std::move(spec), "").ok());
  auto b = coordinator_->LeaseJob(worker_id_, "gpu-b");
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->granted);
  auto a = coordinator_->LeaseJob(worker_id_, "gpu-a");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->granted);
}

TEST_F(CoordinatorDeviceLeaseTest, EmptyUuidMatchesAnyDeviceAsBefore) {
  const std::string job = SubmitForModel("a100");
  auto any = coordinator_->LeaseJob(worker_id_, "");
  ASSERT_TRUE(any.ok()) << any.status();
  ASSERT_TRUE(any->granted);
  EXPECT_EQ(any->job.job_id(), job);
}

TEST_F(CoordinatorDeviceLeaseTest, AnUnknownDeviceIsRefusedNamingIt) {
  SubmitForModel("");
  auto r = coordinator_->LeaseJob(worker_id_, "gpu-zzz");
  ASSERT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("gpu-zzz"), absl::string_view::npos) << r.status();
  // Nothing was leased by the refused call.
  auto a = coordinator_->LeaseJob(worker_id_, "gpu-a");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->granted);
}

}  // namespace
}  // namespace kbench::server
