// The job lifecycle's dialect layer on SQLite (job_tables.h): SQL text with ?N placeholders, BLOB
// columns for the protobuf messages. SQLite has one writer at a time (BEGIN IMMEDIATE), so `lock`
// asks for nothing more.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/store/job_tables.h"
#include "server/store/sqlite_util.h"

namespace kbench::server::sqlite {

// The row q stands on, selected with kJobColumns.
absl::StatusOr<JobRow> ReadJobRow(const Statement& q);

class SqliteJobTables final : public JobTables {
 public:
  // Inside a transaction of the connection that statements belong to, under its lock.
  explicit SqliteJobTables(StatementCache* statements) : statements_(statements) {}

  absl::StatusOr<JobRow> LoadJob(absl::string_view job_id, bool lock) override;
  absl::StatusOr<std::optional<JobRow>> FindByLease(absl::string_view lease_id, bool lock) override;
  absl::Status SetCancelled(absl::string_view job_id, v1::JobState state, int64_t finished_ms) override;
  absl::StatusOr<std::optional<v1::Job>> StartAttempt(const std::vector<std::string>& candidates, v1::JobState from,
                                                      v1::JobState to, absl::string_view worker_id,
                                                      absl::string_view lease_id, int64_t expires_ms,
                                                      int64_t now_ms) override;
  absl::Status SetLeaseExpiry(absl::string_view job_id, int64_t expires_ms, const v1::Progress* progress) override;
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
  // The indexes stored for one (job, attempt), read once per transaction: a report's results are then
  // told new or not without a query each.
  struct StoredIndexes {
    std::string job_id;
    int32_t attempt = 0;
    std::set<int64_t> indexes;
  };

  StatementCache* statements_;
  std::optional<StoredIndexes> stored_;
};

}  // namespace kbench::server::sqlite
