// The Store on PostgreSQL, for a fleet: several coordinator replicas share one database. Each call is
// one transaction on a pooled connection (READ COMMITTED), retried on a deadlock or serialization
// failure. Leasing reads the queue without locks, then claims the first matching job with
// SELECT ... FOR UPDATE SKIP LOCKED and re-checks that it is still QUEUED, so two replicas (or two
// threads) never lease one job twice and never wait on each other's candidates; rows a lease, report
// or requeue touches are locked FOR UPDATE, and the reaper skips leases another replica is handling.
#pragma once

#include <memory>
#include <string>

#include "server/store/pg_util.h"
#include "server/store/store.h"

namespace kbench::server {

class PostgresStore final : public Store {
 public:
  // Connects pool_size connections with the libpq connection string ("postgresql://user@host:port/db"
  // or "host=... dbname=...") and brings the schema up to date.
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& conninfo, int pool_size = 4);

  absl::StatusOr<InsertOutcome> InsertJob(const v1::Job& job) override;
  absl::StatusOr<v1::Job> GetJob(absl::string_view job_id) override;
  absl::StatusOr<std::optional<v1::Job>> FindJobByIdempotencyKey(absl::string_view key) override;
  absl::StatusOr<std::vector<v1::Job>> ListJobs(int limit, v1::JobState state) override;
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountJobsByState() override;
  absl::StatusOr<Transition> CancelJob(absl::string_view job_id, int64_t now_ms) override;

  // The matcher runs inside the lease's transaction; it must not call back into the store.
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
  absl::StatusOr<std::vector<WorkerRow>> ListWorkerRows(const HaveRegistration& have) override;

 private:
  explicit PostgresStore(std::unique_ptr<pg::Pool> pool) : pool_(std::move(pool)) {}

  // Runs body(connection) between BEGIN and COMMIT (ROLLBACK when it fails); again, up to a few
  // times, when the transaction was aborted by a deadlock or a serialization failure.
  template <typename Body>
  auto Transact(Body body) -> decltype(body(std::declval<pg::Connection&>()));
  // Runs body(connection) outside a transaction: single statements.
  template <typename Body>
  auto Read(Body body) -> decltype(body(std::declval<pg::Connection&>())) {
    pg::Pool::Handle conn = pool_->Acquire();
    if (!conn->EnsureConnected()) return absl::UnavailableError("postgres: connection lost; reconnecting failed");
    return body(*conn);
  }

  std::unique_ptr<pg::Pool> pool_;
};

// True for a --db value that names a PostgreSQL database rather than a SQLite file.
bool IsPostgresUri(absl::string_view db);

}  // namespace kbench::server
