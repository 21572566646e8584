// The Coordinator's logic with a fake clock, a temporary SQLite store and fake workers' catalogs.
#include "server/coordinator/coordinator.h"

#include <map>
#include <memory>
#include <vector>

#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

using testing::CpuWorker;
using testing::CudaWorker;
using testing::OkResult;
using testing::RmsnormSpec;

constexpr int64_t kGiB = int64_t{1} << 30;

// Records what the coordinator reports.
struct RecordingObserver : CoordinatorObserver {
  int submitted = 0;
  int leased = 0;
  int requeued = 0;
  std::vector<std::pair<v1::JobState, double>> finished;
  std::vector<v1::ResultStatus> results;
  FleetSnapshot snapshot;
  void JobSubmitted() override { ++submitted; }
  void JobLeased(double) override { ++leased; }
  void JobRequeued() override { ++requeued; }
  void JobFinished(v1::JobState s, double run) override { finished.emplace_back(s, run); }
  void ResultStored(v1::ResultStatus s) override { results.push_back(s); }
  void Snapshot(const FleetSnapshot& s) override { snapshot = s; }
};

class CoordinatorTest : public ::testing::Test {
 protected:
  CoordinatorTest() {
    auto store = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    config_.lease_ttl = std::chrono::milliseconds(1000);
    config_.max_attempts = 3;
    config_.worker_lost_after = std::chrono::milliseconds(5000);
    coordinator_ = std::make_unique<Coordinator>(config_, store_.get(), &clock_, &observer_);
  }

  std::string Register(v1::WorkerInfo info) {
    auto r = coordinator_->RegisterWorker(std::move(info));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->worker_id : "";
  }

  std::string Submit(v1::JobSpec spec, const std::string& key = "") {
    auto r = coordinator_->Submit(std::move(spec), key);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->job_id : "";
  }

  size_t JobCount() { return coordinator_->ListJobs(1000, v1::JOB_STATE_UNSPECIFIED)->size(); }

  void ExpectError(const absl::Status& s, absl::StatusCode code, absl::string_view text) {
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(text), absl::string_view::npos) << "expected '" << text << "' in: " << s;
  }

  FakeClock clock_;
  CoordinatorConfig config_;
  RecordingObserver observer_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
};

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

// An OK result of the small preset with 50 samples spread +-0.5% around center_ns; no device named,
// so the coordinator takes the worker's.
v1::Result Timed(int index, double center_ns) {
  v1::Result r = OkResult(index, 0);
  r.mutable_problem()->set_preset("small");
  for (int i = 0; i < 50; ++i) r.mutable_timing()->add_samples_ns(center_ns * (1 + 0.001 * ((i * 37) % 11 - 5)));
  r.mutable_timing()->set_median_ns(center_ns);
  r.mutable_roofline()->add_ceilings()->set_utilization(0.4);
  return r;
}

class CoordinatorHistoryTest : public CoordinatorTest {
 protected:
  // Verdicts as stored, without confirming re-runs (CoordinatorConfirmTest has them).
  CoordinatorHistoryTest() { Reconfigure(false); }

  void Reconfigure(bool confirm) {
    config_.confirm_regressions = confirm;
    coordinator_ = std::make_unique<Coordinator>(config_, store_.get(), &clock_, &observer_);
  }

  // Submits a job with the labels, leases it on worker, reports the results and completes it.
  std::string RunJob(const std::string& worker, std::map<std::string, std::string> labels,
                     const std::vector<v1::Result>& results) {
    v1::JobSpec spec = RmsnormSpec();
    for (const auto& [k, v] : labels) (*spec.mutable_labels())[k] = v;
    const std::string id = Submit(spec);
    auto lease = coordinator_->LeaseJob(worker);
    EXPECT_TRUE(lease.ok() && lease->granted);
    if (!lease.ok() || !lease->granted) return id;
    EXPECT_EQ(lease->job.job_id(), id);
    auto report = coordinator_->ReportProgress(lease->lease_id, nullptr, results);
    EXPECT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(coordinator_->CompleteJob(lease->lease_id, false, "").ok());
    clock_.AdvanceMs(1000);
    return id;
  }

  HistoryRow PointOfJob(const std::string& job_id) {
    auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
    EXPECT_TRUE(history.ok()) << history.status();
    if (history.ok())
      for (const HistoryRow& p : history->points)
        if (p.job_id == job_id) return p;
    ADD_FAILURE() << "no history point for " << job_id;
    return {};
  }

  std::vector<v1::Verdict> Verdicts(const HistoryOutcome& h) {
    std::vector<v1::Verdict> out;
    for (const HistoryRow& p : h.points) out.push_back(p.verdict.verdict);
    return out;
  }
};

TEST_F(CoordinatorHistoryTest, ResultsAreJudgedAgainstTheMainBranch) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}, {"git_sha", "aaa"}};
  RunJob(w, main, {Timed(0, 1000)});  // The series' first result: nothing to compare with.
  RunJob(w, main, {Timed(0, 1000)});
  RunJob(w, main, {Timed(0, 1000)});
  const std::string pr = RunJob(w, {{"branch", "pr-42"}, {"git_sha", "bbb"}}, {Timed(0, 1100)});
  const std::string faster = RunJob(w, {{"branch", "pr-43"}}, {Timed(0, 900)});

  auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(Verdicts(*history),
            (std::vector<v1::Verdict>{v1::FASTER, v1::SLOWER, v1::SAME, v1::SAME, v1::NO_BASELINE}));
  const HistoryRow& slower = history->points[1];
  EXPECT_EQ(slower.job_id, pr);
  EXPECT_EQ(slower.branch, "pr-42");
  EXPECT_EQ(slower.git_sha, "bbb");
  EXPECT_EQ(slower.series.gpu_model, "NVIDIA H100");  // From the worker: the result named no device.
  EXPECT_EQ(slower.series.shape, "64x1024");
  EXPECT_NEAR(slower.verdict.change_fraction, 0.10, 0.002);
  EXPECT_LT(slower.verdict.p_value, 0.01);
  EXPECT_NEAR(slower.verdict.baseline_median_ns, 1000, 1);
  EXPECT_DOUBLE_EQ(slower.utilization, 0.4);
  EXPECT_EQ(history->points[0].job_id, faster);
  // The current baseline: the three main results' run medians.
  EXPECT_EQ(history->baseline_results, 3);
  EXPECT_NEAR(history->baseline_median_ns, 1000, 1);

  // Pull-request results are judged but are not the series' latest point; main results are.
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  ASSERT_EQ(observer_.snapshot.series.size(), 1u);
  const auto& [labels, gauge] = *observer_.snapshot.series.begin();
  EXPECT_EQ(labels.gpu_model, "NVIDIA H100");
  EXPECT_EQ(labels.op, "rmsnorm");
  EXPECT_EQ(labels.variant, "cpu_naive");
  EXPECT_EQ(labels.shape, "64x1024");
  EXPECT_EQ(labels.dtype, "f32");
  EXPECT_DOUBLE_EQ(gauge.median_seconds, 1000e-9);
  EXPECT_DOUBLE_EQ(gauge.utilization, 0.4);
  EXPECT_FALSE(gauge.regression);

  // A regression that lands on main raises the series' regression gauge.
  RunJob(w, main, {Timed(0, 1200)});
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  EXPECT_TRUE(observer_.snapshot.series.begin()->second.regression);
  EXPECT_DOUBLE_EQ(observer_.snapshot.series.begin()->second.median_seconds, 1200e-9);
}

class CoordinatorConfirmTest : public CoordinatorHistoryTest {
 protected:
  CoordinatorConfirmTest() { Reconfigure(true); }

  // Leases the next job, which must be a re-run confirming `confirms`, reports result and completes it.
  std::string RunRerun(const std::string& worker, const std::string& confirms, const v1::Result& result) {
    auto lease = coordinator_->LeaseJob(worker);
    EXPECT_TRUE(lease.ok() && lease->granted);
    if (!lease.ok() || !lease->granted) return "";
    const auto& spec = lease->job.spec();
    EXPECT_EQ(spec.labels().at(kConfirmsLabel), confirms);
    EXPECT_EQ(spec.labels().at("branch"), "main");
    EXPECT_EQ(spec.variants_size(), 1);
    EXPECT_EQ(spec.problems_size(), 1);
    EXPECT_EQ(spec.problems(0).preset(), "small");
    EXPECT_EQ(spec.selector().model(), "NVIDIA H100");  // The series' GPU model: another would be another series.
    EXPECT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {result}).ok());
    EXPECT_TRUE(coordinator_->CompleteJob(lease->lease_id, false, "").ok());
    clock_.AdvanceMs(1000);
    return lease->job.job_id();
  }

  bool GaugeRegression() {
    EXPECT_TRUE(coordinator_->PublishSnapshot().ok());
    return !observer_.snapshot.series.empty() && observer_.snapshot.series.begin()->second.regression;
  }
};

TEST_F(CoordinatorConfirmTest, ASlowerIsAlertedOnlyWhenItsReRunConfirmsIt) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}, {"git_sha", "aaa"}};
  for (int i = 0; i < 4; ++i) RunJob(w, main, {Timed(0, 1000)});
  const size_t jobs = JobCount();

  // A slow run: SLOWER in its history, one re-run queued, the gauge not raised yet.
  const std::string first = RunJob(w, main, {Timed(0, 1200)});
  EXPECT_EQ(PointOfJob(first).verdict.verdict, v1::SLOWER);
  EXPECT_EQ(JobCount(), jobs + 2);
  EXPECT_FALSE(GaugeRegression());
  // The re-run reads slow too: confirmed, the gauge is raised.
  const std::string rerun = RunRerun(w, first, Timed(0, 1190));
  EXPECT_EQ(PointOfJob(rerun).verdict.verdict, v1::SLOWER);
  EXPECT_TRUE(GaugeRegression());
  // A re-run enqueues no re-run of its own.
  EXPECT_EQ(JobCount(), jobs + 2);
}

TEST_F(CoordinatorConfirmTest, AReRunThatReadsAsUsualClearsTheAlarm) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}, {"git_sha", "aaa"}};
  for (int i = 0; i < 4; ++i) RunJob(w, main, {Timed(0, 1000)});
  const std::string first = RunJob(w, main, {Timed(0, 1080)});  // A clock state, say.
  ASSERT_EQ(PointOfJob(first).verdict.verdict, v1::SLOWER);
  const std::string rerun = RunRerun(w, first, Timed(0, 1000));
  EXPECT_NE(PointOfJob(rerun).verdict.verdict, v1::SLOWER);
  EXPECT_FALSE(GaugeRegression());
}

TEST_F(CoordinatorConfirmTest, AResultReportedTwiceEnqueuesOneReRun) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}};
  for (int i = 0; i < 4; ++i) RunJob(w, main, {Timed(0, 1000)});
  const size_t jobs = JobCount();
  v1::JobSpec spec = RmsnormSpec();
  (*spec.mutable_labels())["branch"] = "main";
  Submit(spec);
  auto lease = coordinator_->LeaseJob(w);
  ASSERT_TRUE(lease.ok() && lease->granted);
  ASSERT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {Timed(0, 1200)}).ok());
  ASSERT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {Timed(0, 1200)}).ok());
  EXPECT_EQ(JobCount(), jobs + 2);
}

TEST_F(CoordinatorHistoryTest, OnlyOkResultsAreJudgedAndExplicitShapesAreNotTracked) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  v1::Result explicit_shape = Timed(0, 1000);
  explicit_shape.mutable_problem()->clear_preset();
  v1::Result failed = Timed(1, 1000);
  failed.set_status(v1::RUNTIME_ERROR);
  const std::string id = RunJob(w, {{"branch", "main"}}, {explicit_shape, failed});
  auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(Verdicts(*history), std::vector<v1::Verdict>{v1::NO_BASELINE});
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  EXPECT_TRUE(observer_.snapshot.series.empty());
}

TEST_F(CoordinatorHistoryTest, HistoryValidatesItsQuery) {
  ExpectError(coordinator_->GetHistory(HistoryQuery{}).status(), absl::StatusCode::kInvalidArgument, "op: required");
  HistoryQuery q{"rmsnorm"};
  q.dtype = static_cast<v1::Dtype>(99);
  ExpectError(coordinator_->GetHistory(q).status(), absl::StatusCode::kInvalidArgument, "dtype");
  auto empty = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->points.empty());
  EXPECT_EQ(empty->baseline_median_ns, 0);
}

v1::WorkerInfo CalibratedH100(const std::string& name, double copy, double bf16) {
  v1::WorkerInfo w = CudaWorker(name, "NVIDIA H100", 9, 0, 80 * kGiB);
  v1::Calibration* c = w.add_calibrations();
  c->set_copy_bytes_per_second(copy);
  (*c->mutable_peak_flops_per_second())["bf16"] = bf16;
  (*c->mutable_peak_flops_per_second())["f32"] = 50e12;
  return w;
}

TEST_F(CoordinatorTest, SlowWorkersAreUnhealthyInListWorkersAndGauges) {
  Register(CalibratedH100("h1", 3.0e12, 700e12));
  Register(CalibratedH100("h2", 3.0e12, 700e12));
  const std::string slow = Register(CalibratedH100("h3", 2.0e12, 700e12));
  auto workers = coordinator_->ListWorkers();
  ASSERT_TRUE(workers.ok());
  for (const v1::WorkerStatus& s : *workers) {
    EXPECT_EQ(s.unhealthy(), s.info().worker_id() == slow) << s.info().name();
    if (s.unhealthy()) EXPECT_NE(s.health_reason().find("copy bandwidth"), std::string::npos) << s.health_reason();
  }
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  const auto& ceilings = observer_.snapshot.worker_ceilings;
  ASSERT_EQ(ceilings.size(), 3u);
  const WorkerCeilingsGauge& h3 = ceilings.at({"h3", "NVIDIA H100"});
  EXPECT_TRUE(h3.unhealthy);
  EXPECT_EQ(h3.copy_bytes_per_second, 2.0e12);
  EXPECT_EQ(h3.peak_flops_per_second.at("bf16"), 700e12);
  EXPECT_FALSE(ceilings.at({"h1", "NVIDIA H100"}).unhealthy);

  // A lost worker leaves the gauges.
  clock_.AdvanceMs(4000);
  for (const v1::WorkerStatus& s : *workers)
    if (s.info().name() != "h1") ASSERT_TRUE(coordinator_->Heartbeat(s.info().worker_id()).ok());
  clock_.AdvanceMs(1500);
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  EXPECT_EQ(observer_.snapshot.worker_ceilings.count({"h1", "NVIDIA H100"}), 0u);
  EXPECT_EQ(observer_.snapshot.worker_ceilings.size(), 2u);
}

}  // namespace
}  // namespace kbench::server
