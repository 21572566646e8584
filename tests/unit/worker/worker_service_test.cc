// The Worker service over loopback (port 0): GetInfo, a tiny RunJob, a bad spec, a busy device.
#include "worker/agent/worker_service.h"

#include "api/channel.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker {
namespace {

class WorkerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = std::make_unique<CpuBackend>(CpuBackendOptions{}, testing::TestHost());
    v1::Calibration c;
    c.set_device_uuid(backend->device().uuid());
    c.set_copy_bytes_per_second(1e10);
    (*c.mutable_peak_flops_per_second())["f32"] = 1e11;
    backend->set_calibration(c);
    node_ = std::make_unique<WorkerNode>(
        WorkerConfig{.name = "test-worker", .labels = {{"rack", "3"}}, .suite_version = "9.9.9"}, std::move(backend),
        testing::TestRegistry());
    service_ = std::make_unique<WorkerService>(*node_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
    stub_ = v1::Worker::NewStub(api::MakeChannel({.address = "127.0.0.1:" + std::to_string(port_)}));
  }
  void TearDown() override { server_->Shutdown(); }

  // Runs a job to the end; returns its events and sets *status.
  std::vector<v1::RunJobEvent> RunJob(const v1::JobSpec& spec, grpc::Status* status) {
    grpc::ClientContext ctx;
    v1::RunJobRequest request;
    *request.mutable_spec() = spec;
    auto reader = stub_->RunJob(&ctx, request);
    std::vector<v1::RunJobEvent> events;
    v1::RunJobEvent e;
    while (reader->Read(&e)) events.push_back(e);
    *status = reader->Finish();
    return events;
  }

  std::unique_ptr<WorkerNode> node_;
  std::unique_ptr<WorkerService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::unique_ptr<v1::Worker::Stub> stub_;
};

TEST_F(WorkerServiceTest, GetInfoDescribesDeviceCalibrationAndCatalog) {
  grpc::ClientContext ctx;
  v1::WorkerInfo info;
  ASSERT_TRUE(stub_->GetInfo(&ctx, {}, &info).ok());
  EXPECT_EQ(info.name(), "test-worker");
  EXPECT_EQ(info.labels().at("rack"), "3");
  EXPECT_EQ(info.suite_version(), "9.9.9");
  ASSERT_EQ(info.devices_size(), 1);
  EXPECT_EQ(info.devices(0).backend(), v1::BACKEND_CPU);
  EXPECT_EQ(info.devices(0).name(), "Test CPU");
  ASSERT_EQ(info.calibrations_size(), 1);
  EXPECT_EQ(info.calibrations(0).device_uuid(), info.devices(0).uuid());
  ASSERT_EQ(info.catalog_size(), 1);
  EXPECT_EQ(info.catalog(0).name(), "scale");
  EXPECT_EQ(info.catalog(0).variants_size(), 6);  // CPU variants only.
}

TEST_F(WorkerServiceTest, RunJobStreamsProgressThenEachResult) {
  v1::JobSpec spec;
  spec.set_op("scale");
  spec.add_variants("cpu_good");
  spec.add_variants("cpu_wrong");
  spec.add_dtypes(v1::DTYPE_F32);
  *spec.mutable_settings() = testing::TinySettings();
  (*spec.mutable_labels())["branch"] = "main";
  grpc::Status status;
  const std::vector<v1::RunJobEvent> events = RunJob(spec, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(events.size(), 4u);
  ASSERT_TRUE(events[0].has_progress());
  EXPECT_EQ(events[0].progress().results_total(), 2);
  EXPECT_EQ(events[0].progress().current(), "scale cpu_good 64 f32");
  ASSERT_TRUE(events[1].has_result());
  const v1::Result& ok = events[1].result();
  EXPECT_EQ(ok.status(), v1::OK) << ok.status_message();
  EXPECT_EQ(ok.index(), 0);
  EXPECT_FALSE(ok.job_id().empty());
  EXPECT_EQ(ok.labels().at("branch"), "main");
  EXPECT_GT(ok.timing().count(), 0);
  EXPECT_EQ(ok.roofline().ceilings_size(), 1);
  ASSERT_TRUE(events[2].has_progress());
  EXPECT_EQ(events[2].progress().results_done(), 1);
  ASSERT_TRUE(events[3].has_result());
  EXPECT_EQ(events[3].result().status(), v1::INCORRECT);
  EXPECT_EQ(events[3].result().index(), 1);
  EXPECT_EQ(events[3].result().job_id(), ok.job_id());
}

TEST_F(WorkerServiceTest, BadSpecIsInvalidArgumentBeforeAnyEvent) {
  v1::JobSpec spec;
  spec.set_op("scale");
  spec.add_variants("cpu_nope");
  grpc::Status status;
  EXPECT_TRUE(RunJob(spec, &status).empty());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("spec.variants[0]"), std::string::npos);
}

TEST_F(WorkerServiceTest, OneJobAtATime) {
  auto held = node_->TryAcquireDevice();  // As if another job were running.
  ASSERT_TRUE(held.ok());
  v1::JobSpec spec;
  spec.set_op("scale");
  grpc::Status status;
  EXPECT_TRUE(RunJob(spec, &status).empty());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  held->reset();
  spec.add_variants("cpu_good");
  spec.add_dtypes(v1::DTYPE_F32);
  *spec.mutable_settings() = testing::TinySettings();
  EXPECT_EQ(RunJob(spec, &status).size(), 2u);
  EXPECT_TRUE(status.ok());
}

}  // namespace
}  // namespace kbench::worker
