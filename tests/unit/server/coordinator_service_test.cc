// The gRPC adapter on a real loopback server (port 0): requests reach the Coordinator and statuses
// come back with their codes and messages.
#include "server/service/coordinator_service.h"

#include <memory>

#include "api/channel.h"
#include "fixtures.h"
#include "service_fixture.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

using testing::CoordinatorServiceTest;

TEST_F(CoordinatorServiceTest, SubmitThenGetJobOverGrpc) {
  v1::SubmitRequest submit;
  *submit.mutable_spec() = testing::RmsnormSpec(8, 16);
  v1::SubmitResponse submitted;
  grpc::Status s = stub_->Submit(api::MakeContext(options_).get(), submit, &submitted);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "no worker has registered yet; cannot validate op");

  v1::RegisterWorkerRequest reg;
  *reg.mutable_info() = testing::CpuWorker("cpu");
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(stub_->RegisterWorker(api::MakeContext(options_).get(), reg, &registered).ok());
  EXPECT_EQ(registered.worker_id().rfind("w-", 0), 0u);
  EXPECT_EQ(registered.heartbeat_interval_ms(), 2000);

  submit.set_idempotency_key("k1");
  s = stub_->Submit(api::MakeContext(options_).get(), submit, &submitted);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(submitted.deduplicated());

  v1::GetJobRequest get;
  get.set_job_id(submitted.job_id());
  v1::Job job;
  s = stub_->GetJob(api::MakeContext(options_).get(), get, &job);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(job.job_id(), submitted.job_id());
  EXPECT_EQ(job.state(), v1::QUEUED);
  EXPECT_EQ(job.idempotency_key(), "k1");
  EXPECT_EQ(job.spec().problems(0).shape().dims(0).name(), "rows");

  get.set_job_id("j-missing");
  s = stub_->GetJob(api::MakeContext(options_).get(), get, &job);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);

  submit.mutable_spec()->set_op("gemm");
  submit.clear_idempotency_key();
  s = stub_->Submit(api::MakeContext(options_).get(), submit, &submitted);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("spec.op: unknown op 'gemm'"), std::string::npos) << s.error_message();
}

TEST_F(CoordinatorServiceTest, WorkerLoopOverGrpc) {
  v1::RegisterWorkerRequest reg;
  *reg.mutable_info() = testing::CpuWorker("cpu");
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(stub_->RegisterWorker(api::MakeContext(options_).get(), reg, &registered).ok());
  v1::SubmitRequest submit;
  *submit.mutable_spec() = testing::RmsnormSpec();
  v1::SubmitResponse submitted;
  ASSERT_TRUE(stub_->Submit(api::MakeContext(options_).get(), submit, &submitted).ok());

  v1::LeaseJobRequest lease_req;
  lease_req.set_worker_id(registered.worker_id());
  v1::LeaseJobResponse lease;
  ASSERT_TRUE(stub_->LeaseJob(api::MakeContext(options_).get(), lease_req, &lease).ok());
  ASSERT_TRUE(lease.granted());
  EXPECT_EQ(lease.job().job_id(), submitted.job_id());

  v1::ReportProgressRequest report;
  report.set_lease_id(lease.lease_id());
  *report.add_results() = testing::OkResult(0, 100000);  // Large enough to need the raised message limit.
  v1::ReportProgressResponse reported;
  grpc::Status s = stub_->ReportProgress(api::MakeContext(options_).get(), report, &reported);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(reported.cancelled());

  v1::CompleteJobRequest complete;
  complete.set_lease_id(lease.lease_id());
  v1::CompleteJobResponse completed;
  ASSERT_TRUE(stub_->CompleteJob(api::MakeContext(options_).get(), complete, &completed).ok());
  EXPECT_EQ(completed.job().state(), v1::SUCCEEDED);
  s = stub_->CompleteJob(api::MakeContext(options_).get(), complete, &completed);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  v1::GetResultsRequest results_req;
  results_req.set_job_id(submitted.job_id());
  results_req.set_include_samples(true);
  v1::GetResultsResponse results;
  ASSERT_TRUE(stub_->GetResults(api::MakeContext(options_).get(), results_req, &results).ok());
  ASSERT_EQ(results.results_size(), 1);
  EXPECT_EQ(results.results(0).timing().samples_ns_size(), 100000);
  EXPECT_EQ(results.job().state(), v1::SUCCEEDED);

  v1::ListWorkersResponse workers;
  ASSERT_TRUE(stub_->ListWorkers(api::MakeContext(options_).get(), {}, &workers).ok());
  ASSERT_EQ(workers.workers_size(), 1);
  EXPECT_EQ(workers.workers(0).state(), "idle");
  v1::ListKernelsResponse kernels;
  ASSERT_TRUE(stub_->ListKernels(api::MakeContext(options_).get(), {}, &kernels).ok());
  ASSERT_EQ(kernels.ops_size(), 1);
  EXPECT_EQ(kernels.ops(0).name(), "rmsnorm");
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(stub_->ListJobs(api::MakeContext(options_).get(), {}, &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 1);
}

TEST_F(CoordinatorServiceTest, HistoryOverGrpc) {
  v1::RegisterWorkerRequest reg;
  *reg.mutable_info() = testing::CudaWorker("gpu", "NVIDIA H100 80GB HBM3", 9, 0, int64_t{80} << 30);
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(stub_->RegisterWorker(api::MakeContext(options_).get(), reg, &registered).ok());
  for (const char* branch : {"main", "main", "pr-1"}) {
    v1::SubmitRequest submit;
    *submit.mutable_spec() = testing::RmsnormSpec();
    (*submit.mutable_spec()->mutable_labels())["branch"] = branch;
    (*submit.mutable_spec()->mutable_labels())["git_sha"] = std::string("sha-") + branch;
    v1::SubmitResponse submitted;
    ASSERT_TRUE(stub_->Submit(api::MakeContext(options_).get(), submit, &submitted).ok());
    v1::LeaseJobRequest lease_req;
    lease_req.set_worker_id(registered.worker_id());
    v1::LeaseJobResponse lease;
    ASSERT_TRUE(stub_->LeaseJob(api::MakeContext(options_).get(), lease_req, &lease).ok());
    ASSERT_TRUE(lease.granted());
    v1::ReportProgressRequest report;
    report.set_lease_id(lease.lease_id());
    *report.add_results() = testing::OkResult(0, 20);
    v1::ReportProgressResponse reported;
    ASSERT_TRUE(stub_->ReportProgress(api::MakeContext(options_).get(), report, &reported).ok());
  }
  v1::GetHistoryRequest req;
  req.set_op("rmsnorm");
  req.set_gpu_model("h100");
  req.set_dtype(v1::DTYPE_F32);
  v1::GetHistoryResponse history;
  grpc::Status s = stub_->GetHistory(api::MakeContext(options_).get(), req, &history);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(history.points_size(), 3);
  const v1::HistoryPoint& pr = history.points(0);
  EXPECT_EQ(pr.branch(), "pr-1");
  EXPECT_EQ(pr.git_sha(), "sha-pr-1");
  EXPECT_EQ(pr.verdict(), v1::SAME);  // The same samples as the baseline's.
  EXPECT_EQ(pr.variant(), "cpu_naive");
  EXPECT_EQ(pr.shape(), "64x1024");
  EXPECT_EQ(pr.dtype(), v1::DTYPE_F32);
  EXPECT_EQ(pr.gpu_model(), "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(pr.median_ns(), 1010);
  EXPECT_GT(pr.finished_unix_ms(), 0);
  EXPECT_NEAR(pr.baseline_median_ns(), 1010, 1e-9);  // Geometric mean of the 2 runs' medians.
  EXPECT_EQ(pr.series_baseline_runs(), 2);           // The series' run-to-run spread: 2 equal runs.
  EXPECT_DOUBLE_EQ(pr.series_run_spread(), 0);
  EXPECT_FALSE(pr.job_id().empty());
  EXPECT_EQ(history.points(2).verdict(), v1::NO_BASELINE);
  EXPECT_EQ(history.baseline_results(), 2);
  EXPECT_NEAR(history.baseline_median_ns(), 1010, 1e-9);

  req.clear_op();
  s = stub_->GetHistory(api::MakeContext(options_).get(), req, &history);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(CoordinatorServiceTest, ClosedGateAnswersUnavailable) {
  ASSERT_TRUE(gate_.CloseAndDrain(absl::Seconds(60)));
  v1::ListWorkersResponse workers;
  grpc::Status s = stub_->ListWorkers(api::MakeContext(options_).get(), {}, &workers);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("shutting down"), std::string::npos) << s.error_message();
}

}  // namespace
}  // namespace kbench::server
