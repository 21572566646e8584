// Tests of the job lifecycle policy (server/store/job_lifecycle.h) over an in-memory JobTables: the
// decisions alone, whatever the SQL. The store suite (store_test.cc) runs the same policy on SQLite
// and PostgreSQL.
#include "server/store/job_lifecycle.h"

#include <map>
#include <set>
#include <tuple>

#include "gtest/gtest.h"

namespace kbench::server {
namespace {

// The tables as maps; writes exactly what the policy tells it, like the SQL dialects.
class MemoryTables final : public JobTables {
 public:
  std::map<std::string, JobRow> jobs;
  std::map<std::tuple<std::string, int32_t, int32_t>, StoredResult> results;
  std::vector<StoredResult> series_upserts;
  std::set<std::string> refreshed_workers;

  absl::StatusOr<JobRow> LoadJob(absl::string_view job_id, bool) override {
    auto it = jobs.find(std::string(job_id));
    if (it == jobs.end()) return lifecycle::JobNotFound(job_id);
    return it->second;
  }
  absl::StatusOr<std::optional<JobRow>> FindByLease(absl::string_view lease_id, bool) override {
    for (const auto& [id, row] : jobs)
      if (row.lease_id == lease_id) return std::optional<JobRow>(row);
    return std::optional<JobRow>();
  }
  absl::Status SetCancelled(absl::string_view job_id, v1::JobState state, int64_t finished_ms) override {
    JobRow& row = jobs[std::string(job_id)];
    row.job.set_state(state);
    row.job.set_finished_unix_ms(finished_ms);
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<v1::Job>> StartAttempt(const std::vector<std::string>& candidates, v1::JobState from,
                                                      v1::JobState to, absl::string_view worker_id,
                                                      absl::string_view lease_id, int64_t expires_ms,
                                                      int64_t now_ms) override {
    for (const std::string& id : candidates) {
      auto it = jobs.find(id);
      if (it == jobs.end() || it->second.job.state() != from) continue;
      JobRow& row = it->second;
      row.job.set_state(to);
      row.job.set_attempts(row.job.attempts() + 1);
      row.job.set_worker_id(std::string(worker_id));
      row.lease_id = std::string(lease_id);
      row.lease_expires_ms = expires_ms;
      row.job.set_started_unix_ms(now_ms);
      row.job.set_finished_unix_ms(0);
      row.job.clear_error();
      row.job.clear_progress();
      refreshed_workers.insert(std::string(worker_id));
      return std::optional<v1::Job>(row.job);
    }
    return std::optional<v1::Job>();
  }
  absl::Status SetLeaseExpiry(absl::string_view job_id, int64_t expires_ms, const v1::Progress* progress) override {
    JobRow& row = jobs[std::string(job_id)];
    row.lease_expires_ms = expires_ms;
    if (progress != nullptr) *row.job.mutable_progress() = *progress;
    return absl::OkStatus();
  }
  absl::StatusOr<v1::Job> EndAttempt(absl::string_view job_id, v1::JobState state, absl::string_view error,
                                     int64_t now_ms) override {
    JobRow& row = jobs[std::string(job_id)];
    row.job.set_state(state);
    row.job.set_error(std::string(error));
    row.lease_id.clear();
    row.lease_expires_ms = 0;
    if (row.job.finished_unix_ms() == 0) row.job.set_finished_unix_ms(now_ms);
    return row.job;
  }
  absl::StatusOr<std::vector<JobRow>> ExpiredLeases(int64_t now_ms) override {
    std::vector<JobRow> out;
    for (const auto& [id, row] : jobs)
      if (!row.lease_id.empty() && row.lease_expires_ms <= now_ms) out.push_back(row);
    return out;
  }
  absl::StatusOr<v1::Job> ReleaseLease(absl::string_view job_id, const LeaseRelease& release, int64_t now_ms) override {
    JobRow& row = jobs[std::string(job_id)];
    row.job.set_state(release.state);
    row.job.set_error(release.error);
    if (release.progress) *row.job.mutable_progress() = *release.progress;
    else row.job.clear_progress();
    if (release.set_finished) row.job.set_finished_unix_ms(now_ms);
    row.lease_id.clear();
    row.lease_expires_ms = 0;
    return row.job;
  }
  absl::Status DeleteAttemptResults(absl::string_view job_id, int32_t attempt) override {
    std::erase_if(results, [&](const auto& e) {
      return std::get<0>(e.first) == job_id && std::get<1>(e.first) == attempt;
    });
    return absl::OkStatus();
  }
  absl::StatusOr<bool> PutResult(const StoredResult& r) override {
    auto key = std::make_tuple(r.result.job_id(), r.result.attempt(), r.result.index());
    const bool is_new = !results.contains(key);
    results[key] = r;
    return is_new;
  }
  absl::Status UpsertSeriesPoint(const StoredResult& r) override {
    series_upserts.push_back(r);
    return absl::OkStatus();
  }
  absl::Status RefreshWorker(absl::string_view worker_id) override {
    refreshed_workers.insert(std::string(worker_id));
    return absl::OkStatus();
  }

  // A job leased as attempt `attempts` to w1 under lease "l-<id>", live until expires_ms.
  void AddLeased(const std::string& id, v1::JobState state, int attempts, int64_t expires_ms) {
    JobRow& row = jobs[id];
    row.job.set_job_id(id);
    row.job.set_state(state);
    row.job.set_attempts(attempts);
    row.job.set_worker_id("w1");
    row.job.mutable_progress()->set_results_done(3);
    row.lease_id = "l-" + id;
    row.lease_expires_ms = expires_ms;
  }
};

TEST(JobLifecycleTest, ExpiredLeaseRequeuesThenFailsAndCancelledStaysCancelled) {
  MemoryTables t;
  t.AddLeased("retry", v1::RUNNING, 1, 100);
  t.AddLeased("last", v1::RUNNING, 3, 100);
  t.AddLeased("cancelled", v1::CANCELLED_JOB, 1, 100);
  t.AddLeased("live", v1::RUNNING, 1, 1000);
  for (const char* id : {"retry", "last", "cancelled", "live"}) {
    StoredResult r;
    r.result.set_job_id(id);
    r.result.set_attempt(t.jobs[id].job.attempts());
    ASSERT_TRUE(t.PutResult(r).ok());
  }
  absl::StatusOr<std::vector<Transition>> out = lifecycle::RequeueExpired(t, 100, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), 3u);
  EXPECT_EQ(t.jobs["retry"].job.state(), v1::QUEUED);
  EXPECT_FALSE(t.jobs["retry"].job.has_progress());
  EXPECT_EQ(t.jobs["retry"].job.finished_unix_ms(), 0);
  EXPECT_EQ(t.jobs["last"].job.state(), v1::FAILED);
  EXPECT_EQ(t.jobs["last"].job.error(), "lease expired on worker 'w1' (attempt 3 of 3); retries exhausted");
  EXPECT_EQ(t.jobs["last"].job.finished_unix_ms(), 100);
  EXPECT_EQ(t.jobs["cancelled"].job.state(), v1::CANCELLED_JOB);
  EXPECT_EQ(t.jobs["cancelled"].job.progress().results_done(), 3);  // Kept.
  EXPECT_EQ(t.jobs["live"].lease_id, "l-live");
  // The RUNNING attempts' partial results go; the cancelled job's and the live one's stay.
  std::set<std::string> left;
  for (const auto& [key, r] : t.results) left.insert(std::get<0>(key));
  EXPECT_EQ(left, (std::set<std::string>{"cancelled", "live"}));
  EXPECT_EQ(t.refreshed_workers, std::set<std::string>{"w1"});
}

TEST(JobLifecycleTest, CompleteKeepsCancelledAndDropsErrorOnSuccess) {
  MemoryTables t;
  t.AddLeased("ok", v1::RUNNING, 1, 100);
  t.AddLeased("bad", v1::RUNNING, 1, 100);
  t.AddLeased("cancelled", v1::CANCELLED_JOB, 1, 100);
  ASSERT_EQ(lifecycle::Complete(t, "l-ok", 50, false, "ignored")->job.state(), v1::SUCCEEDED);
  EXPECT_EQ(t.jobs["ok"].job.error(), "");
  ASSERT_EQ(lifecycle::Complete(t, "l-bad", 50, true, "boom")->job.error(), "boom");
  EXPECT_EQ(t.jobs["bad"].job.state(), v1::FAILED);
  absl::StatusOr<Transition> c = lifecycle::Complete(t, "l-cancelled", 50, false, "");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->job.state(), v1::CANCELLED_JOB);
  EXPECT_EQ(c->previous_state, v1::CANCELLED_JOB);
  EXPECT_TRUE(t.jobs["ok"].lease_id.empty());
  // An expired lease is gone even before the reaper ran.
  t.AddLeased("late", v1::RUNNING, 1, 100);
  EXPECT_TRUE(absl::IsFailedPrecondition(lifecycle::Complete(t, "l-late", 100, false, "").status()));
}

TEST(JobLifecycleTest, ReportStampsResultsAndUpsertsOnlyTrackedOkSeries) {
  MemoryTables t;
  t.AddLeased("j", v1::RUNNING, 2, 100);
  std::vector<v1::Result> results(3);
  for (int i = 0; i < 3; ++i) {
    results[i].set_index(i);
    results[i].set_job_id("forged");
    results[i].set_attempt(9);
    results[i].set_worker_id("someone-else");
    results[i].set_status(i == 2 ? v1::INCORRECT : v1::OK);
    results[i].mutable_timing()->add_samples_ns(5);
  }
  std::vector<ResultVerdict> verdicts(3);
  verdicts[0].tracked = true;
  verdicts[2].tracked = true;  // Not OK: no series point.
  absl::StatusOr<ReportOutcome> out = lifecycle::Report(t, "l-j", 50, 1000, nullptr, results, verdicts);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->added, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(out->lease.expires_unix_ms, 1050);
  ASSERT_EQ(t.results.size(), 3u);
  for (const auto& [key, r] : t.results) {
    EXPECT_EQ(r.result.job_id(), "j");
    EXPECT_EQ(r.result.attempt(), 2);
    EXPECT_EQ(r.result.worker_id(), "w1");
    EXPECT_EQ(r.result.timing().samples_ns_size(), 0);  // Packed apart.
  }
  ASSERT_EQ(t.series_upserts.size(), 1u);
  EXPECT_EQ(t.series_upserts[0].result.index(), 0);
  // The same report again stores nothing new.
  out = lifecycle::Report(t, "l-j", 60, 1000, nullptr, results, verdicts);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->added.empty());
  EXPECT_TRUE(absl::IsInvalidArgument(lifecycle::CheckVerdicts(results, std::vector<ResultVerdict>(2))));
}

TEST(JobLifecycleTest, CancelAndGrant) {
  MemoryTables t;
  t.jobs["q"].job.set_job_id("q");
  t.jobs["q"].job.set_state(v1::QUEUED);
  t.AddLeased("taken", v1::RUNNING, 1, 1000);  // Granted by another replica since the queue was read.
  // Only a QUEUED candidate is granted; the first such, in the order given.
  absl::StatusOr<std::optional<Lease>> none = lifecycle::Grant(t, {"taken"}, "w2", "lease-0", 10, 90);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(t.jobs["taken"].lease_id, "l-taken");
  absl::StatusOr<std::optional<Lease>> granted = lifecycle::Grant(t, {"taken", "q"}, "w2", "lease-1", 10, 90);
  ASSERT_TRUE(granted.ok() && granted->has_value());
  const Lease& lease = **granted;
  EXPECT_EQ(lease.job.job_id(), "q");
  EXPECT_EQ(lease.job.state(), v1::RUNNING);
  EXPECT_EQ(lease.job.attempts(), 1);
  EXPECT_EQ(lease.lease_id, "lease-1");
  EXPECT_EQ(lease.expires_unix_ms, 100);
  EXPECT_EQ(t.refreshed_workers, std::set<std::string>{"w2"});
  absl::StatusOr<Transition> c = lifecycle::Cancel(t, "q", 20);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->job.state(), v1::CANCELLED_JOB);
  EXPECT_EQ(t.jobs["q"].lease_id, "lease-1");  // Kept, so that the worker hears of it.
  ASSERT_TRUE(lifecycle::Complete(t, "lease-1", 30, false, "").ok());
  // Cancelling a cancelled job changes nothing.
  c = lifecycle::Cancel(t, "q", 40);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->previous_state, v1::CANCELLED_JOB);
  EXPECT_EQ(t.jobs["q"].job.finished_unix_ms(), 20);
  t.jobs["q"].job.set_state(v1::SUCCEEDED);
  EXPECT_TRUE(absl::IsFailedPrecondition(lifecycle::Cancel(t, "q", 40).status()));
  EXPECT_TRUE(absl::IsNotFound(lifecycle::Cancel(t, "nope", 40).status()));
}

}  // namespace
}  // namespace kbench::server
