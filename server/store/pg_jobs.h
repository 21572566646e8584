// The job lifecycle's dialect layer on PostgreSQL (job_tables.h): SQL text with $N placeholders,
// BYTEA columns for the protobuf messages, rows locked FOR UPDATE (the reaper's with SKIP LOCKED, so
// that replicas never wait on each other's expired leases), RETURNING instead of a second read.
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/store/job_tables.h"
#include "server/store/pg_util.h"

namespace kbench::server::pg {

// Row `row` of r, selected with kJobColumns.
absl::StatusOr<JobRow> ReadJobRow(const Rows& r, int row);

// A page of the queue, oldest first: job_id, spec, created_ms, seq of the QUEUED jobs after
// ($1 created_ms, $2 seq), at most $3 of them.
const std::string& QueuePageSql();

class PgJobTables final : public JobTables {
 public:
  // Inside a transaction on c; StartAttempt, one statement, may also run as a transaction of its own.
  explicit PgJobTables(Connection& c) : c_(c) {}

  absl::StatusOr<JobRow> LoadJob(absl::string_view job_id, bool lock) override;
  absl::StatusOr<std::optional<JobRow>> FindByLease(absl::string_view lease_id, bool lock) override;
  absl::Status SetCancelled(absl::string_view job_id, v1::JobState state, int64_t finished_ms) override;
  absl::StatusOr<std::optional<v1::Job>> StartAttempt(const std::vector<std::string>& candidates, v1::JobState from,
                                                      v1::JobState to, absl::string_view worker_id,
                                                      absl::string_view lease_id, int64_t expires_ms,
                                                      int64_t now_ms) override;
  absl::Status SetLeaseExpiry(absl::string_view job_id, int64_t expires_ms, const v1::Progress* progress) override;
  // One UPDATE ... RETURNING instead of a locking SELECT and an UPDATE.
  absl::StatusOr<std::optional<JobRow>> ExtendLiveLease(absl::string_view lease_id, int64_t now_ms, int64_t expires_ms,
                                                        const v1::Progress* progress) override;
  absl::StatusOr<v1::Job> EndAttempt(absl::string_view job_id, v1::JobState state, absl::string_view error,
                                     int64_t now_ms) override;
  absl::StatusOr<std::vector<JobRow>> ExpiredLeases(int64_t now_ms) override;
  absl::StatusOr<v1::Job> ReleaseLease(absl::string_view job_id, const LeaseRelease& release,
                                       int64_t now_ms) override;
  absl::Status DeleteAttemptResults(absl::string_view job_id, int32_t attempt) override;
  absl::StatusOr<bool> PutResult(const StoredResult& result) override;
  absl::Status UpsertSeriesPoint(const StoredResult& result) override;
  absl::Status RefreshWorker(absl::string_view worker_id) override;

 private:
  Connection& c_;
};

}  // namespace kbench::server::pg
