// The Store contract, written against the interface and instantiated per backend: jobs, leases,
// reports, cancellation, workers, reopening (fixtures: store_fixture.h; series: store_series_test.cc).
#include "store_fixture.h"

namespace kbench::server {
namespace {

using namespace store_testing;  // NOLINT: the fixtures (store_fixture.h)
using testing::OkResult;
using testing::RmsnormSpec;

TEST_P(StoreTest, InsertThenGet) {
  v1::JobSpec spec = RmsnormSpec(8, 16);
  (*spec.mutable_labels())["git_sha"] = "abc123";
  Insert("j-1", kT0, "", spec);
  auto job = store_->GetJob("j-1");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->job_id(), "j-1");
  EXPECT_EQ(job->state(), v1::QUEUED);
  EXPECT_EQ(job->created_unix_ms(), kT0);
  EXPECT_EQ(job->attempts(), 0);
  EXPECT_EQ(job->spec().labels().at("git_sha"), "abc123");
  EXPECT_EQ(job->spec().problems(0).shape().dims(1).value(), 16);
  EXPECT_EQ(store_->GetJob("j-nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, IdempotencyKeyReturnsTheFirstJob) {
  Insert("j-1", kT0, "key-a");
  v1::Job second;
  second.set_job_id("j-2");
  second.set_idempotency_key("key-a");
  second.set_created_unix_ms(kT0 + 5);
  auto r = store_->InsertJob(second);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->inserted);
  EXPECT_EQ(r->job.job_id(), "j-1");
  EXPECT_EQ(store_->GetJob("j-2").status().code(), absl::StatusCode::kNotFound);
  auto found = store_->FindJobByIdempotencyKey("key-a");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->job_id(), "j-1");
  EXPECT_FALSE(store_->FindJobByIdempotencyKey("key-b")->has_value());
  // Jobs without a key never collide with each other.
  Insert("j-3", kT0 + 1);
  Insert("j-4", kT0 + 2);
  EXPECT_EQ(store_->ListJobs(10, v1::JOB_STATE_UNSPECIFIED)->size(), 3u);
  // A taken job id is refused.
  v1::Job dup;
  dup.set_job_id("j-3");
  EXPECT_EQ(store_->InsertJob(dup).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST_P(StoreTest, ListJobsNewestFirstWithStateFilterAndLimit) {
  Insert("j-a", kT0);
  Insert("j-b", kT0 + 1);
  Insert("j-c", kT0 + 2);
  ASSERT_TRUE(LeaseAny("w-1", kT0 + 10, "l-1").has_value());  // j-a runs.
  auto all = store_->ListJobs(10, v1::JOB_STATE_UNSPECIFIED);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].job_id(), "j-c");
  EXPECT_EQ((*all)[2].job_id(), "j-a");
  auto queued = store_->ListJobs(10, v1::QUEUED);
  ASSERT_EQ(queued->size(), 2u);
  EXPECT_EQ((*queued)[0].job_id(), "j-c");
  EXPECT_EQ(store_->ListJobs(1, v1::JOB_STATE_UNSPECIFIED)->size(), 1u);
  auto counts = store_->CountJobsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[v1::QUEUED], 2);
  EXPECT_EQ((*counts)[v1::RUNNING], 1);
}

TEST_P(StoreTest, LeasesOldestMatchingJob) {
  Register("w-1");
  v1::JobSpec h100 = RmsnormSpec();
  h100.mutable_selector()->set_model("H100");
  Insert("j-old-h100", kT0, "", h100);
  Insert("j-mid", kT0 + 1);
  Insert("j-new", kT0 + 2);
  auto not_h100 = [](const v1::JobSpec& s) { return s.selector().model().empty(); };
  auto l1 = store_->LeaseNextJob("w-1", not_h100, kT0 + 10, kTtl, "l-1");
  ASSERT_TRUE(l1.ok() && l1->has_value()) << l1.status();
  EXPECT_EQ((*l1)->job.job_id(), "j-mid");
  EXPECT_EQ((*l1)->job.state(), v1::RUNNING);
  EXPECT_EQ((*l1)->job.attempts(), 1);
  EXPECT_EQ((*l1)->job.worker_id(), "w-1");
  EXPECT_EQ((*l1)->job.started_unix_ms(), kT0 + 10);
  EXPECT_EQ((*l1)->lease_id, "l-1");
  EXPECT_EQ((*l1)->expires_unix_ms, kT0 + 10 + kTtl);
  auto w = store_->GetWorker("w-1");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->state, "busy");
  EXPECT_EQ(w->current_job_id, "j-mid");

  auto l2 = store_->LeaseNextJob("w-1", not_h100, kT0 + 11, kTtl, "l-2");
  ASSERT_TRUE(l2.ok() && l2->has_value());
  EXPECT_EQ((*l2)->job.job_id(), "j-new");
  auto l3 = store_->LeaseNextJob("w-1", not_h100, kT0 + 12, kTtl, "l-3");
  ASSERT_TRUE(l3.ok());
  EXPECT_FALSE(l3->has_value());
  EXPECT_EQ(store_->GetJob("j-old-h100")->state(), v1::QUEUED);
}

TEST_P(StoreTest, ConcurrentLeasesNeverShareAJob) {
  constexpr int kJobs = 40;
  constexpr int kWorkers = 4;
  for (int i = 0; i < kJobs; ++i) Insert("j-" + std::to_string(i), kT0 + i);
  absl::Mutex mu;
  std::vector<std::string> leased;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int n = 0;; ++n) {
        auto lease = store_->LeaseNextJob(
            "w-" + std::to_string(w), [](const v1::JobSpec&) { return true; }, kT0 + 100, kTtl,
            "l-" + std::to_string(w) + "-" + std::to_string(n));
        ASSERT_TRUE(lease.ok()) << lease.status();
        if (!lease->has_value()) return;
        absl::MutexLock lock(&mu);
        leased.push_back((*lease)->job.job_id());
      }
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_EQ(leased.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<std::string>(leased.begin(), leased.end()).size(), static_cast<size_t>(kJobs));
}

// Workers of two kinds lease at once from a queue whose oldest jobs (more than a page of the
// PostgreSQL store's queue read, and more than one grant's candidates) only one kind can run: each job
// is granted once, only to a worker that can run it, the stored row is the granted one, and each
// worker's row names the job it was granted last.
TEST_P(StoreTest, ConcurrentLeasesGrantEachJobOnceToAWorkerThatCanRunIt) {
  constexpr int kHead = 100;  // H100 jobs, oldest.
  constexpr int kMixed = 60;  // Then A100 and H100 alternately.
  constexpr int kWorkersPerModel = 3;
  auto spec_for = [](const std::string& model) {
    v1::JobSpec spec = RmsnormSpec();
    spec.mutable_selector()->set_model(model);
    return spec;
  };
  std::map<std::string, std::string> model_of;  // job id -> the only model that can run it
  for (int i = 0; i < kHead + kMixed; ++i) {
    const std::string model = i < kHead || i % 2 == 0 ? "H100" : "A100";
    const std::string id = "j-" + std::to_string(i);
    model_of[id] = model;
    Insert(id, kT0 + i, "", spec_for(model));
  }
  struct Granted {
    std::string worker, model, job_id, job_worker, lease_id;
  };
  absl::Mutex mu;
  std::vector<Granted> granted;
  std::map<std::string, std::string> last_of;  // worker -> the job it was granted last
  std::vector<std::thread> workers;
  for (const std::string model : {"H100", "A100"}) {
    for (int w = 0; w < kWorkersPerModel; ++w) {
      const std::string worker = "w-" + model + "-" + std::to_string(w);
      Register(worker);
      workers.emplace_back([&, model, worker] {
        auto can_run = [model](const v1::JobSpec& spec) { return spec.selector().model() == model; };
        for (int n = 0;; ++n) {
          const std::string lease_id = worker + "-l" + std::to_string(n);
          // Later grants start later, so the worker's row must name the last one.
          auto lease = store_->LeaseNextJob(worker, can_run, kT0 + 1000 + n, kTtl, lease_id);
          ASSERT_TRUE(lease.ok()) << lease.status();
          if (!lease->has_value()) return;
          absl::MutexLock lock(&mu);
          const v1::Job& job = (*lease)->job;
          granted.push_back({worker, model, job.job_id(), job.worker_id(), (*lease)->lease_id});
          last_of[worker] = job.job_id();
        }
      });
    }
  }
  for (auto& t : workers) t.join();
  std::set<std::string> ids;
  for (const Granted& g : granted) {
    EXPECT_TRUE(ids.insert(g.job_id).second) << g.job_id << " granted twice";
    EXPECT_EQ(model_of[g.job_id], g.model) << g.job_id << " granted to " << g.worker;
    EXPECT_EQ(g.job_worker, g.worker);
    auto stored = store_->GetLeasedJob(g.lease_id, kT0 + 1000);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(stored->job_id(), g.job_id);
    EXPECT_EQ(stored->state(), v1::RUNNING);
    EXPECT_EQ(stored->attempts(), 1);
  }
  EXPECT_EQ(ids.size(), model_of.size());
  for (const auto& [worker, job_id] : last_of) {
    auto w = store_->GetWorker(worker);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->state, "busy");
    EXPECT_EQ(w->current_job_id, job_id) << worker;
  }
}

TEST_P(StoreTest, ExpiredLeaseRequeuesForAnotherWorker) {
  Register("w-1");
  Register("w-2");
  Insert("j-1", kT0);
  auto first = LeaseAny("w-1", kT0, "l-1");
  ASSERT_TRUE(first.has_value());
  // One millisecond before expiry nothing moves.
  auto none = store_->RequeueExpired(kT0 + kTtl - 1, 3);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto moved = store_->RequeueExpired(kT0 + kTtl, 3);
  ASSERT_TRUE(moved.ok());
  ASSERT_EQ(moved->size(), 1u);
  EXPECT_EQ((*moved)[0].previous_state, v1::RUNNING);
  EXPECT_EQ((*moved)[0].job.state(), v1::QUEUED);
  EXPECT_EQ(store_->GetWorker("w-1")->state, "idle");

  auto second = LeaseAny("w-2", kT0 + kTtl + 1, "l-2");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->job.job_id(), "j-1");
  EXPECT_EQ(second->job.worker_id(), "w-2");
  EXPECT_EQ(second->job.attempts(), 2);
  // The first worker's lease is gone for every lease call.
  const int64_t now = kT0 + kTtl + 2;
  EXPECT_EQ(store_->ExtendLease("l-1", now, kTtl, nullptr).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->AppendResults("l-1", now, kTtl, nullptr, {OkResult(0)}, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->CompleteJob("l-1", now, false, "").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store_->ExtendLease("l-2", now, kTtl, nullptr).ok());
}

TEST_P(StoreTest, RetriesExhaustedFailsTheJob) {
  Insert("j-1", kT0);
  int64_t now = kT0;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto lease = LeaseAny("w-1", now, "l-" + std::to_string(attempt));
    ASSERT_TRUE(lease.has_value()) << "attempt " << attempt;
    now += kTtl;
    auto moved = store_->RequeueExpired(now, /*max_attempts=*/2);
    ASSERT_TRUE(moved.ok());
    ASSERT_EQ(moved->size(), 1u);
  }
  auto job = store_->GetJob("j-1");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::FAILED);
  EXPECT_EQ(job->attempts(), 2);
  EXPECT_EQ(job->finished_unix_ms(), now);
  EXPECT_NE(job->error().find("retries exhausted"), std::string::npos) << job->error();
  EXPECT_FALSE(LeaseAny("w-1", now, "l-3").has_value());
}

TEST_P(StoreTest, LeaseIsStaleOnceExpiredEvenBeforeRequeue) {
  Insert("j-1", kT0);
  ASSERT_TRUE(LeaseAny("w-1", kT0, "l-1").has_value());
  v1::Progress progress;
  progress.set_results_done(1);
  progress.set_results_total(4);
  auto extended = store_->ExtendLease("l-1", kT0 + 900, kTtl, &progress);
  ASSERT_TRUE(extended.ok()) << extended.status();
  EXPECT_EQ(extended->expires_unix_ms, kT0 + 900 + kTtl);
  EXPECT_EQ(store_->GetJob("j-1")->progress().results_total(), 4);
  // Past the original expiry but within the extension: still live.
  EXPECT_TRUE(store_->ExtendLease("l-1", kT0 + 1500, kTtl, nullptr).ok());
  auto late = store_->ExtendLease("l-1", kT0 + 1500 + kTtl, kTtl, nullptr);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(late.status().message().find("expired or superseded"), absl::string_view::npos);
  EXPECT_EQ(store_->ExtendLease("l-unknown", kT0, kTtl, nullptr).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(StoreTest, AReportExtendsTheLeaseInTheSameTransaction) {
  Insert("j-1", kT0);
  ASSERT_TRUE(LeaseAny("w-1", kT0, "l-1").has_value());
  auto job = store_->GetLeasedJob("l-1", kT0 + 1);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->job_id(), "j-1");
  EXPECT_EQ(job->state(), v1::RUNNING);
  v1::Progress progress;
  progress.set_results_done(1);
  progress.set_results_total(3);
  auto report = store_->AppendResults("l-1", kT0 + 900, kTtl, &progress, {OkResult(0)}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->lease.expires_unix_ms, kT0 + 900 + kTtl);
  EXPECT_EQ(report->lease.lease_id, "l-1");
  EXPECT_EQ(report->lease.job.progress().results_done(), 1);
  EXPECT_EQ(store_->GetJob("j-1")->progress().results_total(), 3);
  // Live past the original expiry thanks to the report; gone after the extension.
  EXPECT_TRUE(store_->GetLeasedJob("l-1", kT0 + 1500).ok());
  EXPECT_EQ(store_->GetLeasedJob("l-1", kT0 + 900 + kTtl).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->GetLeasedJob("l-nope", kT0).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->AppendResults("l-1", kT0 + 900 + kTtl, kTtl, nullptr, {OkResult(1)}, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(StoreTest, ResultsRoundTripWithSamplesInIndexOrder) {
  Insert("j-1", kT0);
  ASSERT_TRUE(LeaseAny("w-1", kT0, "l-1").has_value());
  v1::Result r2 = OkResult(2, 7);
  r2.set_job_id("forged");  // The store names the job, attempt and worker itself.
  r2.set_attempt(99);
  auto added = store_->AppendResults("l-1", kT0 + 1, kTtl, nullptr, {r2, OkResult(0, 3)}, {});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->added, (std::vector<int32_t>{2, 0}));
  // A report sent twice stores nothing twice.
  added = store_->AppendResults("l-1", kT0 + 2, kTtl, nullptr, {OkResult(0, 3), OkResult(1, 4)}, {});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(added->added, (std::vector<int32_t>{1}));

  auto with = store_->GetResults("j-1", true);
  ASSERT_TRUE(with.ok()) << with.status();
  ASSERT_EQ(with->size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*with)[i].index(), i);
  EXPECT_EQ((*with)[2].timing().samples_ns_size(), 7);
  EXPECT_DOUBLE_EQ((*with)[2].timing().samples_ns(6), 1006.0);
  EXPECT_EQ((*with)[2].job_id(), "j-1");
  EXPECT_EQ((*with)[2].attempt(), 1);
  EXPECT_EQ((*with)[2].worker_id(), "w-1");

  auto without = store_->GetResults("j-1", false);
  ASSERT_TRUE(without.ok());
  ASSERT_EQ(without->size(), 3u);
  EXPECT_EQ((*without)[2].timing().samples_ns_size(), 0);
  EXPECT_DOUBLE_EQ((*without)[2].timing().median_ns(), (*with)[2].timing().median_ns());
  EXPECT_EQ(store_->GetResults("j-nope", false).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, ExpiredAttemptsPartialResultsAreRemoved) {
  Insert("j-1", kT0);
  ASSERT_TRUE(LeaseAny("w-1", kT0, "l-1").has_value());
  ASSERT_TRUE(store_->AppendResults("l-1", kT0 + 1, kTtl, nullptr, {OkResult(0), OkResult(1)}, {}).ok());
  ASSERT_EQ(store_->GetResults("j-1", false)->size(), 2u);
  ASSERT_EQ(store_->RequeueExpired(kT0 + kTtl + 1, 3)->size(), 1u);
  EXPECT_TRUE(store_->GetResults("j-1", false)->empty());
  ASSERT_TRUE(LeaseAny("w-2", kT0 + kTtl + 2, "l-2").has_value());
  ASSERT_TRUE(store_->AppendResults("l-2", kT0 + kTtl + 3, kTtl, nullptr, {OkResult(0)}, {}).ok());
  auto results = store_->GetResults("j-1", false);
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].attempt(), 2);
  EXPECT_EQ((*results)[0].worker_id(), "w-2");
}

TEST_P(StoreTest, CompleteEndsTheAttempt) {
  Register("w-1");
  Insert("j-ok", kT0);
  Insert("j-bad", kT0 + 1);
  ASSERT_TRUE(LeaseAny("w-1", kT0 + 10, "l-ok").has_value());
  ASSERT_TRUE(LeaseAny("w-1", kT0 + 11, "l-bad").has_value());
  auto ok = store_->CompleteJob("l-ok", kT0 + 20, false, "");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->previous_state, v1::RUNNING);
  EXPECT_EQ(ok->job.state(), v1::SUCCEEDED);
  EXPECT_EQ(ok->job.finished_unix_ms(), kT0 + 20);
  EXPECT_EQ(store_->GetWorker("w-1")->current_job_id, "j-bad");
  auto bad = store_->CompleteJob("l-bad", kT0 + 21, true, "device lost");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->job.state(), v1::FAILED);
  EXPECT_EQ(bad->job.error(), "device lost");
  EXPECT_EQ(store_->GetWorker("w-1")->state, "idle");
  // The lease ended with the attempt.
  EXPECT_EQ(store_->CompleteJob("l-ok", kT0 + 22, false, "").status().code(), absl::StatusCode::kFailedPrecondition);
  // Nothing expires later either.
  EXPECT_TRUE(store_->RequeueExpired(kT0 + 100 * kTtl, 3)->empty());
}

TEST_P(StoreTest, CancelQueuedAndRunningJobs) {
  Register("w-1");
  Insert("j-queued", kT0);
  Insert("j-running", kT0 + 1);
  auto q = store_->CancelJob("j-queued", kT0 + 5);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->previous_state, v1::QUEUED);
  EXPECT_EQ(q->job.state(), v1::CANCELLED_JOB);
  EXPECT_EQ(q->job.finished_unix_ms(), kT0 + 5);

  auto lease = LeaseAny("w-1", kT0 + 6, "l-1");  // The cancelled job is not leased.
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->job.job_id(), "j-running");
  auto r = store_->CancelJob("j-running", kT0 + 7);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->previous_state, v1::RUNNING);
  // The worker still holds the lease and hears of the cancellation.
  auto cancelled = store_->Heartbeat("w-1", kT0 + 8);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(*cancelled, std::vector<std::string>{"j-running"});
  auto ext = store_->ExtendLease("l-1", kT0 + 8, kTtl, nullptr);
  ASSERT_TRUE(ext.ok());
  EXPECT_EQ(ext->job.state(), v1::CANCELLED_JOB);
  auto done = store_->CompleteJob("l-1", kT0 + 9, false, "");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->previous_state, v1::CANCELLED_JOB);
  EXPECT_EQ(done->job.state(), v1::CANCELLED_JOB);
  EXPECT_TRUE(store_->Heartbeat("w-1", kT0 + 10)->empty());
  EXPECT_EQ(store_->GetWorker("w-1")->state, "idle");

  // Cancelling twice changes nothing; a finished job cannot be cancelled.
  auto again = store_->CancelJob("j-queued", kT0 + 11);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->previous_state, v1::CANCELLED_JOB);
  EXPECT_EQ(again->job.finished_unix_ms(), kT0 + 5);
  Insert("j-done", kT0 + 12);
  ASSERT_TRUE(LeaseAny("w-1", kT0 + 13, "l-2").has_value());
  ASSERT_TRUE(store_->CompleteJob("l-2", kT0 + 14, false, "").ok());
  EXPECT_EQ(store_->CancelJob("j-done", kT0 + 15).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->CancelJob("j-nope", kT0).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, CancelledJobWhoseWorkerVanishedJustLosesTheLease) {
  Insert("j-1", kT0);
  ASSERT_TRUE(LeaseAny("w-1", kT0, "l-1").has_value());
  ASSERT_TRUE(store_->AppendResults("l-1", kT0 + 1, kTtl, nullptr, {OkResult(0)}, {}).ok());
  ASSERT_TRUE(store_->CancelJob("j-1", kT0 + 2).ok());
  auto moved = store_->RequeueExpired(kT0 + 1 + kTtl, 3);  // The report extended the lease.
  ASSERT_TRUE(moved.ok());
  ASSERT_EQ(moved->size(), 1u);
  EXPECT_EQ((*moved)[0].job.state(), v1::CANCELLED_JOB);
  EXPECT_EQ(store_->GetResults("j-1", false)->size(), 1u);  // What it did before the cancel stays.
  EXPECT_TRUE(store_->RequeueExpired(kT0 + 1 + kTtl, 3)->empty());
}

TEST_P(StoreTest, WorkersUpsertHeartbeatAndList) {
  Register("w-b", kT0);
  Register("w-a", kT0 + 1);
  auto hb = store_->Heartbeat("w-b", kT0 + 500);
  ASSERT_TRUE(hb.ok());
  EXPECT_TRUE(hb->empty());
  EXPECT_EQ(store_->Heartbeat("w-nope", kT0).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetWorker("w-nope").status().code(), absl::StatusCode::kNotFound);
  auto list = store_->ListWorkers();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].info.worker_id(), "w-b");  // Registration order.
  EXPECT_EQ((*list)[0].last_heartbeat_unix_ms, kT0 + 500);
  EXPECT_EQ((*list)[0].info.catalog(0).name(), "rmsnorm");
  EXPECT_EQ((*list)[0].state, "idle");
  // Re-registering replaces the info.
  v1::WorkerInfo info = testing::CpuWorker("renamed");
  info.set_worker_id("w-b");
  ASSERT_TRUE(store_->UpsertWorker(info, kT0 + 600).ok());
  EXPECT_EQ(store_->GetWorker("w-b")->info.name(), "renamed");
  list = store_->ListWorkers();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].info.worker_id(), "w-b");  // Kept its place.
}

TEST_P(StoreTest, ReopenKeepsEverything) {
  Register("w-1");
  Insert("j-queued", kT0, "key-q");
  Insert("j-running", kT0 + 1);
  ASSERT_TRUE(store_->CancelJob("j-queued", kT0 + 1).ok());
  auto lease = LeaseAny("w-1", kT0 + 2, "l-1");
  ASSERT_TRUE(lease.has_value());
  ASSERT_TRUE(store_->AppendResults("l-1", kT0 + 3, kTtl, nullptr, {OkResult(0, 9)}, {}).ok());
  Insert("j-later", kT0 + 4);

  Reopen();

  EXPECT_EQ(store_->GetJob("j-queued")->state(), v1::CANCELLED_JOB);
  EXPECT_EQ((*store_->FindJobByIdempotencyKey("key-q"))->job_id(), "j-queued");
  EXPECT_EQ(store_->GetJob("j-later")->state(), v1::QUEUED);
  auto results = store_->GetResults("j-running", true);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].timing().samples_ns_size(), 9);
  EXPECT_EQ(store_->GetWorker("w-1")->current_job_id, "j-running");
  // The lease survived the restart too.
  EXPECT_TRUE(store_->ExtendLease("l-1", kT0 + 5, kTtl, nullptr).ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values(testing::SqliteBackend(), testing::PostgresBackend()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kbench::server
