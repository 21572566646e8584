// The coordinator refuses what does not fit: a worker's report that does not fit its job (index,
// op, variant, job id, progress) with nothing stored, registrations and submissions past their
// limits; it cuts long free text; and its list responses stay within their byte budget.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "api/limits.h"
#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/coordinator_budget.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

using testing::CpuWorker;
using testing::OkResult;
using testing::RmsnormSpec;

void ExpectInvalid(const absl::Status& s, const std::string& field_prefix) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), field_prefix)) << s.message();
  EXPECT_LT(s.message().size(), 1024u);
}

class CoordinatorBoundsTest : public ::testing::Test {
 protected:
  CoordinatorBoundsTest() {
    auto store = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    coordinator_ = std::make_unique<Coordinator>(CoordinatorConfig{}, store_.get(), &clock_);
    auto w = coordinator_->RegisterWorker(CpuWorker("cpu"));
    EXPECT_TRUE(w.ok()) << w.status();
    worker_ = w.ok() ? w->worker_id : "";
  }

  // A job of exactly one result: rmsnorm cpu_naive on one f32 shape. Leased; returns the lease id.
  std::string LeaseOneResultJob() {
    v1::JobSpec spec = RmsnormSpec();
    spec.add_variants("cpu_naive");
    auto submitted = coordinator_->Submit(spec, "");
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    job_id_ = submitted.ok() ? submitted->job_id : "";
    auto lease = coordinator_->LeaseJob(worker_);
    EXPECT_TRUE(lease.ok() && lease->granted);
    return lease.ok() ? lease->lease_id : "";
  }

  size_t StoredResults() {
    auto r = coordinator_->GetResults(job_id_, false);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->results.size() : 0;
  }

  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::string worker_;
  std::string job_id_;
};

TEST_F(CoordinatorBoundsTest, AResultOfTheJobIsStored) {
  const std::string lease = LeaseOneResultJob();
  v1::Progress progress;
  progress.set_results_done(1);
  progress.set_results_total(1);
  auto r = coordinator_->ReportProgress(lease, &progress, {OkResult(0)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(StoredResults(), 1u);
}

TEST_F(CoordinatorBoundsTest, IndexBeyondThePlanIsRefusedAndNothingStored) {
  const std::string lease = LeaseOneResultJob();
  auto r = coordinator_->ReportProgress(lease, nullptr, {OkResult(0), OkResult(999)});
  ExpectInvalid(r.status(), "results[1].index: 999 is beyond job " + job_id_ + "'s 1 planned results");
  EXPECT_EQ(StoredResults(), 0u);
}

TEST_F(CoordinatorBoundsTest, ProgressPastItsTotalOrNotTheJobsTotalIsRefused) {
  const std::string lease = LeaseOneResultJob();
  v1::Progress progress;
  progress.set_results_done(50);
  progress.set_results_total(1);
  ExpectInvalid(coordinator_->ReportProgress(lease, &progress, {}).status(), "progress.results_done: 50");
  progress.set_results_done(1);
  progress.set_results_total(7);
  ExpectInvalid(coordinator_->ReportProgress(lease, &progress, {OkResult(0)}).status(),
                "progress.results_total: 7, but job " + job_id_ + " plans 1 results");
  // A total of 0 (unknown) does not let done pass the plan either.
  progress.set_results_done(2);
  progress.set_results_total(0);
  ExpectInvalid(coordinator_->ReportProgress(lease, &progress, {}).status(), "progress.results_done: 2");
  EXPECT_EQ(StoredResults(), 0u);
  auto job = coordinator_->GetJob(job_id_);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->progress().results_done(), 0);  // Nothing of a refused report is stored.
}

TEST_F(CoordinatorBoundsTest, ResultsOfAnotherOpVariantOrJobAreRefused) {
  const std::string lease = LeaseOneResultJob();
  v1::Result other_variant = OkResult(0);
  other_variant.set_variant("cpu_blocked");  // The op has it; this job does not run it.
  ExpectInvalid(coordinator_->ReportProgress(lease, nullptr, {other_variant}).status(),
                "results[0].variant: 'cpu_blocked' is not a variant job");
  v1::Result other_op = OkResult(0);
  other_op.set_op("softmax");
  ExpectInvalid(coordinator_->ReportProgress(lease, nullptr, {other_op}).status(),
                "results[0].op: 'softmax' is not the job's op 'rmsnorm'");
  v1::Result other_job = OkResult(0);
  other_job.set_job_id("j-someoneelse");
  ExpectInvalid(coordinator_->ReportProgress(lease, nullptr, {other_job}).status(), "results[0].job_id");
  EXPECT_EQ(StoredResults(), 0u);
}

TEST_F(CoordinatorBoundsTest, MalformedResultsAreRefusedBeforeTheJobIsRead) {
  const std::string lease = LeaseOneResultJob();
  v1::Result labels = OkResult(0);
  (*labels.mutable_labels())["k"] = std::string(10 << 20, 'x');
  ExpectInvalid(coordinator_->ReportProgress(lease, nullptr, {labels}).status(), "results[0].labels[\"k\"]: value");
  std::vector<v1::Result> many(api::kMaxResultsPerReport + 1, OkResult(0));
  ExpectInvalid(coordinator_->ReportProgress(lease, nullptr, many).status(), "results: 4097 entries");
  EXPECT_EQ(StoredResults(), 0u);
}

TEST_F(CoordinatorBoundsTest, LongTextIsCutAndStored) {
  const std::string lease = LeaseOneResultJob();
  v1::Result r = OkResult(0);
  r.set_status(v1::RUNTIME_ERROR);
  r.set_status_message(std::string(1 << 20, 'e'));
  ASSERT_TRUE(coordinator_->ReportProgress(lease, nullptr, {r}).ok());
  auto stored = coordinator_->GetResults(job_id_, false);
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->results.size(), 1u);
  EXPECT_LE(stored->results[0].status_message().size(), api::kMaxLogBytes);
  EXPECT_TRUE(absl::EndsWith(stored->results[0].status_message(), "(1048576 bytes in all)"));
  auto done = coordinator_->CompleteJob(lease, true, std::string(1 << 20, 'f'));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_LE(done->error().size(), api::kMaxLogBytes);
}

TEST_F(CoordinatorBoundsTest, OversizedIdsAndRegistrationsAreRefused) {
  const std::string huge(10 << 20, 'x');
  ExpectInvalid(coordinator_->GetJob(huge).status(), "job_id: 'xxxx");
  ExpectInvalid(coordinator_->CancelJob(huge).status(), "job_id: ");
  ExpectInvalid(coordinator_->GetResults(huge, false).status(), "job_id: ");
  ExpectInvalid(coordinator_->Heartbeat(huge).status(), "worker_id: ");
  ExpectInvalid(coordinator_->LeaseJob(huge).status(), "worker_id: ");
  ExpectInvalid(coordinator_->ReportProgress(huge, nullptr, {}).status(), "lease_id: ");
  ExpectInvalid(coordinator_->CompleteJob(huge, false, "").status(), "lease_id: ");
  ExpectInvalid(coordinator_->ListKernels(huge).status(), "op: ");
  ExpectInvalid(coordinator_->GetHistory(HistoryQuery{.op = "rmsnorm", .variant = huge}).status(), "variant: ");
  ExpectInvalid(coordinator_->Submit(RmsnormSpec(), std::string(api::kMaxIdempotencyKeyBytes + 1, 'k')).status(),
                "idempotency_key: ");
  v1::WorkerInfo w = CpuWorker("big");
  (*w.mutable_labels())["zone"] = std::string(1 << 20, 'z');
  ExpectInvalid(coordinator_->RegisterWorker(w).status(), "info.labels[\"zone\"]: value");
}

TEST_F(CoordinatorBoundsTest, ATenMegabyteOpNameGetsAShortAnswer) {
  v1::JobSpec spec = RmsnormSpec();
  spec.set_op(std::string(10 << 20, 'o'));
  absl::StatusOr<SubmitOutcome> r = coordinator_->Submit(spec, "");
  ExpectInvalid(r.status(), "spec.op: 'oooo");
}

TEST(CoordinatorBudget, JobListsLeaveOutSourcesThenOldJobs) {
  std::vector<v1::Job> jobs(10);
  for (v1::Job& j : jobs) {
    v1::CustomVariant* c = j.mutable_spec()->add_custom_variants();
    c->set_name("mine");
    c->set_source(std::string(4 << 20, 's'));
    (*j.mutable_spec()->mutable_labels())["note"] = std::string(200, 'n');
  }
  jobs[0].set_job_id("newest");
  FitJobList(&jobs, 32u << 20);
  ASSERT_EQ(jobs.size(), 10u);  // Without their sources they all fit.
  for (const v1::Job& j : jobs) EXPECT_TRUE(j.spec().custom_variants(0).source().empty());
  EXPECT_EQ(jobs[0].spec().custom_variants(0).name(), "mine");
  const size_t one = jobs[0].ByteSizeLong();
  FitJobList(&jobs, 3 * one + 30);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].job_id(), "newest");
}

TEST(CoordinatorBudget, WorkerListsLeaveOutCatalogsOnlyWhenTooBig) {
  std::vector<v1::WorkerStatus> workers(4);
  for (v1::WorkerStatus& w : workers) *w.mutable_info() = CpuWorker("cpu");
  FitWorkerList(&workers, 1u << 20);
  EXPECT_EQ(workers[0].info().catalog_size(), 1);
  const size_t slim = [] {
    v1::WorkerStatus w;
    *w.mutable_info() = CpuWorker("cpu");
    w.mutable_info()->clear_catalog();
    return w.ByteSizeLong();
  }();
  FitWorkerList(&workers, 4 * (slim + 6));
  ASSERT_EQ(workers.size(), 4u);
  for (const v1::WorkerStatus& w : workers) EXPECT_EQ(w.info().catalog_size(), 0);
  FitWorkerList(&workers, 2 * (slim + 6));
  EXPECT_EQ(workers.size(), 2u);
}

TEST(CoordinatorBudget, OpListsKeepTheOpsThatFit) {
  std::vector<v1::OpInfo> ops(5, testing::RmsnormOp());
  FitOpList(&ops, 1u << 20);
  EXPECT_EQ(ops.size(), 5u);
  FitOpList(&ops, 2 * (ops[0].ByteSizeLong() + 6));
  EXPECT_EQ(ops.size(), 2u);
}

TEST(CoordinatorBudget, ResultsLeaveOutSamplesThenRefuse) {
  JobResults r;
  r.job.set_job_id("j-1");
  for (int i = 0; i < 3; ++i) r.results.push_back(OkResult(i, 10000));
  ASSERT_TRUE(FitResults(&r, 1u << 20).ok());
  EXPECT_EQ(r.results[0].timing().samples_ns_size(), 10000);
  ASSERT_TRUE(FitResults(&r, 10000).ok());
  EXPECT_EQ(r.results[0].timing().samples_ns_size(), 0);
  EXPECT_EQ(r.results[0].timing().median_ns(), OkResult(0, 10000).timing().median_ns());
  absl::Status s = FitResults(&r, 10);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(s.message(), "job j-1")) << s.message();
}

}  // namespace
}  // namespace kbench::server
