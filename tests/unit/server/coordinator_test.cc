// The Coordinator's logic with a fake clock, a temporary SQLite store and fake workers' catalogs:
// submit, validation, leases, reports, cancellation, workers. History verdicts: coordinator_history_test.cc.
#include <map>
#include <memory>
#include <vector>

#include "coordinator_fixture.h"

namespace kbench::server {
namespace {

using namespace coordinator_testing;  // NOLINT: the fixture (coordinator_fixture.h)
using testing::CpuWorker;
using testing::CudaWorker;
using testing::OkResult;
using testing::RmsnormSpec;

TEST_F(CoordinatorTest, SubmitWithoutAnyWorkerIsRefused) {
  auto r = coordinator_->Submit(RmsnormSpec(), "");
  ExpectError(r.status(), absl::StatusCode::kFailedPrecondition, "no worker has registered yet; cannot validate op");
  EXPECT_EQ(JobCount(), 0u);
}

TEST_F(CoordinatorTest, ValidationErrorsNameTheFieldAndStoreNothing) {
  Register(CpuWorker("cpu"));
  v1::JobSpec no_op = RmsnormSpec();
  no_op.clear_op();
  ExpectError(coordinator_->Submit(no_op, "").status(), absl::StatusCode::kInvalidArgument, "spec.op");
  ExpectError(coordinator_->Submit(RmsnormSpec(0, 16), "").status(), absl::StatusCode::kInvalidArgument,
              "spec.problems[0].shape.dims[0]");
  v1::JobSpec bad_variant = RmsnormSpec();
  bad_variant.add_variants("v9_magic");
  ExpectError(coordinator_->Submit(bad_variant, "").status(), absl::StatusCode::kInvalidArgument,
              "spec.variants[0]");
  v1::JobSpec three_dims = RmsnormSpec();
  three_dims.mutable_problems(0)->mutable_shape()->add_dims()->set_value(4);
  ExpectError(coordinator_->Submit(three_dims, "").status(), absl::StatusCode::kInvalidArgument,
              "spec.problems[0].shape");
  v1::JobSpec bad_preset = RmsnormSpec();
  bad_preset.mutable_problems(0)->set_preset("huge");
  ExpectError(coordinator_->Submit(bad_preset, "").status(), absl::StatusCode::kInvalidArgument,
              "spec.problems[0].preset");
  v1::JobSpec bad_dtype = RmsnormSpec();
  bad_dtype.add_dtypes(v1::DTYPE_FP8_E4M3);
  ExpectError(coordinator_->Submit(bad_dtype, "").status(), absl::StatusCode::kInvalidArgument, "spec.dtypes[0]");
  ExpectError(coordinator_->Submit(RmsnormSpec(), std::string(300, 'k')).status(),
              absl::StatusCode::kInvalidArgument, "idempotency_key");
  EXPECT_EQ(JobCount(), 0u);
  EXPECT_EQ(observer_.submitted, 0);
}

TEST_F(CoordinatorTest, UnknownOpListsTheKnownOnes) {
  Register(CpuWorker("a"));
  v1::WorkerInfo b = CpuWorker("b");
  *b.add_catalog() = testing::VectorAddOp();
  Register(b);
  v1::JobSpec spec = RmsnormSpec();
  spec.set_op("softmax");
  ExpectError(coordinator_->Submit(spec, "").status(), absl::StatusCode::kInvalidArgument,
              "spec.op: unknown op 'softmax' (known: rmsnorm, vector_add)");
  EXPECT_EQ(JobCount(), 0u);
}

TEST_F(CoordinatorTest, SubmitResolvesTheSpecAndStoresItDurably) {
  Register(CpuWorker("cpu"));
  clock_.AdvanceMs(42);
  const std::string id = Submit(RmsnormSpec(8, 16));
  ASSERT_EQ(id.rfind("j-", 0), 0u) << id;
  EXPECT_EQ(id.size(), 14u);
  auto job = coordinator_->GetJob(id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::QUEUED);
  EXPECT_EQ(job->created_unix_ms(), clock_.NowUnixMs());
  // Positional dims were named from the op.
  EXPECT_EQ(job->spec().problems(0).shape().dims(0).name(), "rows");
  EXPECT_EQ(job->spec().problems(0).shape().dims(1).name(), "cols");
  EXPECT_EQ(observer_.submitted, 1);
  ExpectError(coordinator_->GetJob("j-unknown").status(), absl::StatusCode::kNotFound, "j-unknown");
}

TEST_F(CoordinatorTest, IdempotencyKeyDeduplicates) {
  Register(CpuWorker("cpu"));
  auto first = coordinator_->Submit(RmsnormSpec(), "ci-run-7");
  auto second = coordinator_->Submit(RmsnormSpec(), "ci-run-7");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE(first->deduplicated);
  EXPECT_TRUE(second->deduplicated);
  EXPECT_EQ(first->job_id, second->job_id);
  EXPECT_EQ(JobCount(), 1u);
  EXPECT_EQ(observer_.submitted, 1);
}

TEST_F(CoordinatorTest, MemoryIsCheckedAgainstMatchingDevices) {
  Register(CpuWorker("small-cpu", /*memory_bytes=*/1 << 20));
  Register(CudaWorker("big-gpu", "NVIDIA H100 80GB HBM3", 9, 0, 80 * kGiB));
  v1::JobSpec big = RmsnormSpec(1024, 1024);  // 8 MiB of f32 tensors.
  big.mutable_selector()->set_backend(v1::BACKEND_CPU);
  ExpectError(coordinator_->Submit(big, "").status(), absl::StatusCode::kInvalidArgument, "spec.problems");
  EXPECT_EQ(JobCount(), 0u);
  big.mutable_selector()->clear_backend();
  Submit(big);  // Fits the GPU.
  EXPECT_EQ(JobCount(), 1u);
}

TEST_F(CoordinatorTest, SelectorMatchesModelCapabilityAndLabels) {
  Register(CpuWorker("cpu"));
  const std::string a100 = Register(CudaWorker("a100", "NVIDIA A100-SXM4-80GB", 8, 0, 80 * kGiB));
  v1::WorkerInfo h100_info = CudaWorker("h100", "NVIDIA H100 80GB HBM3", 9, 0, 80 * kGiB);
  (*h100_info.mutable_labels())["pool"] = "ci";
  const std::string h100 = Register(h100_info);

  v1::JobSpec by_model = RmsnormSpec();
  by_model.mutable_selector()->set_model("h100");  // Case-insensitive substring.
  Submit(by_model);
  v1::JobSpec by_cc = RmsnormSpec();
  by_cc.mutable_selector()->set_min_compute_capability(90);
  const std::string cc_job = Submit(by_cc);
  v1::JobSpec by_label = RmsnormSpec();
  (*by_label.mutable_selector()->mutable_labels())["pool"] = "ci";
  Submit(by_label);

  v1::JobSpec h200 = RmsnormSpec();
  h200.mutable_selector()->set_model("H200");
  ExpectError(coordinator_->Submit(h200, "").status(), absl::StatusCode::kFailedPrecondition,
              "spec.selector: no registered worker matches (model=H200)");
  v1::JobSpec prod = RmsnormSpec();
  (*prod.mutable_selector()->mutable_labels())["pool"] = "prod";
  ExpectError(coordinator_->Submit(prod, "").status(), absl::StatusCode::kFailedPrecondition, "spec.selector");
  v1::JobSpec cc100 = RmsnormSpec();
  cc100.mutable_selector()->set_min_compute_capability(100);
  ExpectError(coordinator_->Submit(cc100, "").status(), absl::StatusCode::kFailedPrecondition, "spec.selector");
  EXPECT_EQ(JobCount(), 3u);

  // Only the H100 worker may lease them.
  auto none = coordinator_->LeaseJob(a100);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->granted);
  for (int i = 0; i < 3; ++i) {
    auto lease = coordinator_->LeaseJob(h100);
    ASSERT_TRUE(lease.ok() && lease->granted) << i;
  }
  EXPECT_EQ(coordinator_->GetJob(cc_job)->worker_id(), h100);
}

TEST_F(CoordinatorTest, LeaseNeedsTheOpInTheWorkersCatalog) {
  const std::string plain = Register(CpuWorker("plain"));
  v1::WorkerInfo with_add = CpuWorker("with-add");
  *with_add.add_catalog() = testing::VectorAddOp();
  const std::string adder = Register(with_add);
  v1::JobSpec spec;
  spec.set_op("vector_add");
  const std::string id = Submit(spec);
  EXPECT_FALSE(coordinator_->LeaseJob(plain)->granted);
  auto lease = coordinator_->LeaseJob(adder);
  ASSERT_TRUE(lease.ok() && lease->granted);
  EXPECT_EQ(lease->job.job_id(), id);
  EXPECT_EQ(observer_.leased, 1);
}

TEST_F(CoordinatorTest, ExpiredLeaseGoesToTheNextWorkerAndTheOldOneIsRejected) {
  const std::string w1 = Register(CpuWorker("one"));
  const std::string w2 = Register(CpuWorker("two"));
  const std::string id = Submit(RmsnormSpec());
  auto first = coordinator_->LeaseJob(w1);
  ASSERT_TRUE(first.ok() && first->granted);
  EXPECT_EQ(first->lease_expires_unix_ms, clock_.NowUnixMs() + 1000);
  EXPECT_FALSE(coordinator_->LeaseJob(w2)->granted);

  clock_.AdvanceMs(1000);
  // LeaseJob requeues expired leases before it looks for work.
  auto second = coordinator_->LeaseJob(w2);
  ASSERT_TRUE(second.ok() && second->granted);
  EXPECT_EQ(second->job.job_id(), id);
  EXPECT_EQ(second->job.attempts(), 2);
  EXPECT_NE(second->lease_id, first->lease_id);
  EXPECT_EQ(observer_.requeued, 1);

  auto stale = coordinator_->ReportProgress(first->lease_id, nullptr, {OkResult(0)});
  ExpectError(stale.status(), absl::StatusCode::kFailedPrecondition, "expired or superseded");
  ExpectError(coordinator_->CompleteJob(first->lease_id, false, "").status(), absl::StatusCode::kFailedPrecondition,
              "lease");
  EXPECT_TRUE(coordinator_->GetResults(id, false)->results.empty());
}

TEST_F(CoordinatorTest, RequeueExpiredFailsAfterMaxAttempts) {
  const std::string w = Register(CpuWorker("flaky"));
  const std::string id = Submit(RmsnormSpec());
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ASSERT_TRUE(coordinator_->LeaseJob(w)->granted) << attempt;
    clock_.AdvanceMs(1000);
    auto changed = coordinator_->RequeueExpired();
    ASSERT_TRUE(changed.ok());
    ASSERT_EQ(changed->size(), 1u);
  }
  auto job = coordinator_->GetJob(id);
  EXPECT_EQ(job->state(), v1::FAILED);
  EXPECT_EQ(job->attempts(), 3);
  EXPECT_EQ(observer_.requeued, 2);
  ASSERT_EQ(observer_.finished.size(), 1u);
  EXPECT_EQ(observer_.finished[0].first, v1::FAILED);
  EXPECT_DOUBLE_EQ(observer_.finished[0].second, 1.0);
}

TEST_F(CoordinatorTest, ProgressResultsAndCompletion) {
  const std::string w = Register(CpuWorker("cpu"));
  const std::string id = Submit(RmsnormSpec());
  auto lease = coordinator_->LeaseJob(w);
  ASSERT_TRUE(lease.ok() && lease->granted);
  clock_.AdvanceMs(600);
  v1::Progress progress;
  progress.set_results_done(2);
  progress.set_results_total(2);
  v1::Result incorrect = OkResult(1);
  incorrect.set_status(v1::INCORRECT);
  auto report = coordinator_->ReportProgress(lease->lease_id, &progress, {OkResult(0), incorrect});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->lease_expires_unix_ms, clock_.NowUnixMs() + 1000);  // Extended.
  EXPECT_FALSE(report->cancelled);
  EXPECT_EQ(observer_.results, (std::vector<v1::ResultStatus>{v1::OK, v1::INCORRECT}));
  // The same results again are not counted again.
  ASSERT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {OkResult(0)}).ok());
  EXPECT_EQ(observer_.results.size(), 2u);
  v1::Result negative = OkResult(-1);
  ExpectError(coordinator_->ReportProgress(lease->lease_id, nullptr, {negative}).status(),
              absl::StatusCode::kInvalidArgument, "results[0].index");

  clock_.AdvanceMs(900);  // Beyond the original lease, within the extension.
  auto done = coordinator_->CompleteJob(lease->lease_id, false, "");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::SUCCEEDED);
  ASSERT_EQ(observer_.finished.size(), 1u);
  EXPECT_DOUBLE_EQ(observer_.finished[0].second, 1.5);

  auto results = coordinator_->GetResults(id, true);
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->job.progress().results_done(), 2);
  ASSERT_EQ(results->results.size(), 2u);
  EXPECT_EQ(results->results[1].status(), v1::INCORRECT);
  EXPECT_EQ(results->results[0].timing().samples_ns_size(), 5);
  EXPECT_EQ(coordinator_->GetResults(id, false)->results[0].timing().samples_ns_size(), 0);
}

TEST_F(CoordinatorTest, CancelQueuedAndRunningJobs) {
  const std::string w = Register(CpuWorker("cpu"));
  const std::string running = Submit(RmsnormSpec());
  const std::string queued = Submit(RmsnormSpec());
  auto lease = coordinator_->LeaseJob(w);
  ASSERT_TRUE(lease.ok() && lease->granted);
  ASSERT_EQ(lease->job.job_id(), running);

  auto c1 = coordinator_->CancelJob(queued);
  ASSERT_TRUE(c1.ok());
  EXPECT_EQ(c1->state(), v1::CANCELLED_JOB);
  auto c2 = coordinator_->CancelJob(running);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->state(), v1::CANCELLED_JOB);

  auto hb = coordinator_->Heartbeat(w);
  ASSERT_TRUE(hb.ok());
  EXPECT_EQ(*hb, std::vector<std::string>{running});
  auto report = coordinator_->ReportProgress(lease->lease_id, nullptr, {});
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->cancelled);
  auto done = coordinator_->CompleteJob(lease->lease_id, false, "");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state(), v1::CANCELLED_JOB);
  EXPECT_TRUE(coordinator_->Heartbeat(w)->empty());
  // Counted once each, at cancellation; the queued one never ran.
  ASSERT_EQ(observer_.finished.size(), 2u);
  EXPECT_EQ(observer_.finished[0].first, v1::CANCELLED_JOB);
  EXPECT_LT(observer_.finished[0].second, 0);
  EXPECT_GE(observer_.finished[1].second, 0);
  EXPECT_FALSE(coordinator_->LeaseJob(w)->granted);
  ExpectError(coordinator_->CancelJob("j-missing").status(), absl::StatusCode::kNotFound, "j-missing");
}

TEST_F(CoordinatorTest, RegisterAssignsOrKeepsIds) {
  const std::string id = Register(CpuWorker("cpu"));
  EXPECT_EQ(id.rfind("w-", 0), 0u) << id;
  v1::WorkerInfo again = CpuWorker("cpu");
  again.set_worker_id(id);
  EXPECT_EQ(Register(again), id);
  v1::WorkerInfo stranger = CpuWorker("cpu");
  stranger.set_worker_id("w-not-from-here");
  const std::string fresh = Register(stranger);
  EXPECT_NE(fresh, "w-not-from-here");
  EXPECT_NE(fresh, id);
  auto r = coordinator_->RegisterWorker(CpuWorker("x"));
  EXPECT_EQ(r->heartbeat_interval_ms, config_.heartbeat_interval.count());
  v1::WorkerInfo no_devices;
  ExpectError(coordinator_->RegisterWorker(no_devices).status(), absl::StatusCode::kInvalidArgument, "info.devices");
  ExpectError(coordinator_->Heartbeat("w-nobody").status(), absl::StatusCode::kNotFound, "register again");
  ExpectError(coordinator_->LeaseJob("w-nobody").status(), absl::StatusCode::kNotFound, "register again");
}

TEST_F(CoordinatorTest, WorkerStatesFollowLeasesAndHeartbeats) {
  const std::string busy = Register(CpuWorker("busy"));
  const std::string quiet = Register(CpuWorker("quiet"));
  const std::string id = Submit(RmsnormSpec());
  ASSERT_TRUE(coordinator_->LeaseJob(busy)->granted);
  auto states = [&] {
    std::map<std::string, std::string> out;
    auto workers = coordinator_->ListWorkers();  // Named: a range-for over *temporary would dangle.
    for (const auto& w : *workers) out[w.info().worker_id()] = w.state();
    return out;
  };
  EXPECT_EQ(states()[busy], "busy");
  EXPECT_EQ(states()[quiet], "idle");
  auto workers = coordinator_->ListWorkers();
  ASSERT_TRUE(workers.ok());
  for (const auto& w : *workers)
    if (w.info().worker_id() == busy) {
      EXPECT_EQ(w.current_job_id(), id);
    }

  clock_.AdvanceMs(4000);
  ASSERT_TRUE(coordinator_->Heartbeat(busy).ok());
  clock_.AdvanceMs(1001);  // quiet: 5001 ms without a heartbeat.
  EXPECT_EQ(states()[quiet], "lost");
  EXPECT_EQ(states()[busy], "busy");

  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  EXPECT_EQ(observer_.snapshot.running, 1);
  EXPECT_EQ(observer_.snapshot.queued, 0);
  EXPECT_EQ((observer_.snapshot.workers[{"lost", "AMD EPYC 7B13"}]), 1);
  EXPECT_EQ((observer_.snapshot.workers[{"busy", "AMD EPYC 7B13"}]), 1);
}

TEST_F(CoordinatorTest, ListKernelsMergesCatalogs) {
  const std::string a = Register(CpuWorker("a"));
  v1::WorkerInfo b = CudaWorker("b", "NVIDIA H100", 9, 0, 80 * kGiB);
  v1::OpInfo* rms = b.mutable_catalog(0);
  rms->mutable_variants()->Clear();
  rms->add_variants()->set_name("cpu_naive");
  rms->add_variants()->set_name("v3_warp_shuffle");
  *b.add_catalog() = testing::VectorAddOp();
  const std::string b_id = Register(b);

  auto all = coordinator_->ListKernels("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name(), "rmsnorm");
  EXPECT_EQ((*all)[1].name(), "vector_add");
  std::vector<std::string> variants;
  for (const auto& v : (*all)[0].variants()) variants.push_back(v.name());
  EXPECT_EQ(variants, (std::vector<std::string>{"cpu_naive", "cpu_blocked", "v3_warp_shuffle"}));

  auto one = coordinator_->ListKernels("vector_add");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  ExpectError(coordinator_->ListKernels("gemm").status(), absl::StatusCode::kNotFound, "gemm");

  // A variant only the GPU worker has is accepted, and only that worker leases the job.
  v1::JobSpec spec = RmsnormSpec();
  spec.add_variants("v3_warp_shuffle");
  Submit(spec);
  EXPECT_FALSE(coordinator_->LeaseJob(a)->granted);
  EXPECT_TRUE(coordinator_->LeaseJob(b_id)->granted);
}

TEST_F(CoordinatorTest, ListJobsDefaultsAndValidates) {
  Register(CpuWorker("cpu"));
  for (int i = 0; i < 3; ++i) {
    Submit(RmsnormSpec());
    clock_.AdvanceMs(1);
  }
  EXPECT_EQ(coordinator_->ListJobs(0, v1::JOB_STATE_UNSPECIFIED)->size(), 3u);
  EXPECT_EQ(coordinator_->ListJobs(2, v1::QUEUED)->size(), 2u);
  EXPECT_TRUE(coordinator_->ListJobs(0, v1::RUNNING)->empty());
  EXPECT_EQ(coordinator_->ListJobs(0, static_cast<v1::JobState>(77)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kbench::server
