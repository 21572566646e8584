// The Store on SQLite: one file in WAL mode (":memory:" for a throwaway store), one connection
// guarded by a mutex. Every mutation is a BEGIN IMMEDIATE transaction. By default every commit that a
// call reports as done is durable before the call returns (a job is on disk before Submit returns and
// neither a restart nor a power loss loses it), by group commit (sqlite_group_commit.h): the fsync
// happens outside the lock, shared by the calls that committed meanwhile. A heartbeat's commit is
// soft state and never waits. With fsync_each_commit false nothing waits for a sync (SQLite's
// synchronous=NORMAL alone): a commit survives the coordinator's crash or restart, but the last ones
// may be lost to an OS crash or power loss.
#pragma once

#include <memory>
#include <string>

#include <sqlite3.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/sqlite_group_commit.h"
#include "server/store/sqlite_jobs.h"
#include "server/store/sqlite_util.h"
#include "server/store/store.h"

namespace kbench::server {

class SqliteStore final : public Store {
 public:
  // Opens or creates the database at path and brings its schema up to date. fsync_each_commit false:
  // no call waits for a sync (see above).
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path, bool fsync_each_commit = true);
  ~SqliteStore() override;

  absl::StatusOr<InsertOutcome> InsertJob(const v1::Job& job) override;
  absl::StatusOr<v1::Job> GetJob(absl::string_view job_id) override;
  absl::StatusOr<std::optional<v1::Job>> FindJobByIdempotencyKey(absl::string_view key) override;
  absl::StatusOr<std::vector<v1::Job>> ListJobs(int limit, v1::JobState state) override;
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountJobsByState() override;
  absl::StatusOr<Transition> CancelJob(absl::string_view job_id, int64_t now_ms) override;

  // The matcher runs with the store's lock held: it must not call back into the store.
  absl::StatusOr<std::optional<Lease>> LeaseNextJob(absl::string_view worker_id, const JobMatcher& matcher,
                                                    int64_t now_ms, int64_t ttl_ms,
                                                    absl::string_view lease_id) override;
  absl::StatusOr<Lease> ExtendLease(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                    const v1::Progress* progress) override;
  absl::StatusOr<v1::Job> GetLeasedJob(absl::string_view lease_id, int64_t now_ms) override;
  absl::StatusOr<ReportOutcome> AppendResults(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                              const v1::Progress* progress, const std::vector<v1::Result>& results,
                                              const std::vector<ResultVerdict>& verdicts) override;
  absl::StatusOr<Transition> CompleteJob(absl::string_view lease_id, int64_t now_ms, bool failed,
                                         absl::string_view error) override;
  absl::StatusOr<std::vector<Transition>> RequeueExpired(int64_t now_ms, int max_attempts) override;

  absl::StatusOr<std::vector<v1::Result>> GetResults(absl::string_view job_id, bool include_samples) override;
  absl::StatusOr<std::vector<BaselineResult>> ReferenceResults(const SeriesKey& series, absl::string_view branch,
                                                               int limit, absl::string_view exclude_job_id,
                                                               int64_t after_ms = 0) override;
  absl::StatusOr<std::vector<BaselineResult>> BaselineResults(const SeriesKey& series, absl::string_view branch,
                                                              int limit, absl::string_view exclude_job_id,
                                                              const HaveSamples& have_samples = nullptr,
                                                              int64_t after_ms = 0) override;
  absl::StatusOr<std::vector<HistoryRow>> History(const HistoryQuery& query) override;
  absl::StatusOr<std::vector<SeriesPoint>> ListSeries() override;
  absl::StatusOr<v1::SeriesControl> InsertSeriesControl(const v1::SeriesControl& control) override;
  absl::StatusOr<std::vector<v1::SeriesControl>> ListSeriesControls(absl::string_view op) override;

  absl::Status UpsertWorker(const v1::WorkerInfo& info, int64_t now_ms) override;
  absl::StatusOr<std::vector<std::string>> Heartbeat(absl::string_view worker_id, int64_t now_ms) override;
  absl::StatusOr<WorkerRecord> GetWorker(absl::string_view worker_id) override;
  absl::StatusOr<std::vector<WorkerRecord>> ListWorkers() override;
  // Keeps no registration versions: every row comes with its registration (`have` is not asked).
  absl::StatusOr<std::vector<WorkerRow>> ListWorkerRows(const HaveRegistration& have) override;

  // WAL syncs made so far by the group commit (0 without one): tests, and how often durability cost.
  uint64_t durable_syncs() const { return group_commit_ == nullptr ? 0 : group_commit_->syncs(); }

 private:
  SqliteStore(sqlite3* db, std::unique_ptr<sqlite::GroupCommit> group_commit)
      : group_commit_(std::move(group_commit)), db_(db), statements_(std::make_unique<sqlite::StatementCache>(db)) {}

  // Runs body(tables) under the lock in one BEGIN IMMEDIATE transaction, committed when body succeeds;
  // returns once that commit is durable.
  absl::StatusOr<InsertOutcome> InsertJobLocked(const v1::Job& job, uint64_t& ticket) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::optional<Lease>> LeaseNextJobLocked(absl::string_view worker_id, const JobMatcher& matcher,
                                                          int64_t now_ms, int64_t ttl_ms, absl::string_view lease_id,
                                                          uint64_t& ticket) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status UpsertWorkerLocked(const v1::WorkerInfo& info, int64_t now_ms, uint64_t& ticket) ABSL_LOCKS_EXCLUDED(mu_);
  template <typename Body>
  auto Transact(Body body) -> decltype(body(std::declval<sqlite::SqliteJobTables&>()));
  // Under the lock, after a COMMIT: the ticket to wait on (0 when nothing was written or nothing waits).
  uint64_t Committed(int64_t changes_before) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Outside the lock: returns once the commit with this ticket is on disk.
  absl::Status Durable(uint64_t ticket) ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<sqlite::GroupCommit> group_commit_;  // Null: nothing waits for a sync.
  absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<sqlite::StatementCache> statements_ ABSL_GUARDED_BY(mu_);  // Of db_; finalized before it closes.
};

}  // namespace kbench::server
