// The dialect layer under the job lifecycle policy (job_lifecycle.h): the statements that policy
// needs on the jobs, results and series tables, inside one open transaction, written once per SQL
// dialect (sqlite_jobs.cc, pg_jobs.cc). An implementation holds SQL text, placeholders, type mapping
// and row locking, and makes no decision about a job's state: every state it writes is given to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "server/store/result_columns.h"
#include "server/store/store.h"

namespace kbench::server {

// A jobs row: the API's Job plus the lease columns it does not carry.
struct JobRow {
  v1::Job job;
  std::string lease_id;
  int64_t lease_expires_ms = 0;
};

// The jobs columns a whole-row read selects, in the order each dialect's ReadJobRow reads them.
inline constexpr absl::string_view kJobColumns =
    "job_id, idempotency_key, spec, state, attempts, worker_id, lease_id, lease_expires_ms, created_ms, "
    "started_ms, finished_ms, error, progress";

// A stored protobuf message (BLOB or BYTEA) parsed into out; DATA_LOSS naming what when it does not parse.
template <typename Message>
absl::Status ParseStored(const std::string& bytes, Message* out, absl::string_view what) {
  if (!out->ParseFromString(bytes)) return absl::DataLossError(absl::StrCat("stored ", what, " does not parse"));
  return absl::OkStatus();
}

// A worker's record from its row: the registration parsed, its worker_id the row's.
inline absl::StatusOr<WorkerRecord> ParseWorkerRow(WorkerRow row) {
  WorkerRecord w;
  if (absl::Status s = ParseStored(row.registration, &w.info, "worker info"); !s.ok()) return s;
  w.info.set_worker_id(std::move(row.worker_id));
  w.last_heartbeat_unix_ms = row.last_heartbeat_unix_ms;
  w.state = std::move(row.state);
  w.current_job_id = std::move(row.current_job_id);
  return w;
}

// Every row parsed, in order (a store's ListWorkers over its ListWorkerRows); the first row that does
// not parse is the error.
inline absl::StatusOr<std::vector<WorkerRecord>> ParseWorkerRows(absl::StatusOr<std::vector<WorkerRow>> rows) {
  if (!rows.ok()) return rows.status();
  std::vector<WorkerRecord> out;
  out.reserve(rows->size());
  for (WorkerRow& row : *rows) {
    absl::StatusOr<WorkerRecord> w = ParseWorkerRow(std::move(row));
    if (!w.ok()) return w.status();
    out.push_back(*std::move(w));
  }
  return out;
}

// A result ready to store: stamped with its job, attempt and worker, samples packed apart.
struct StoredResult {
  v1::Result result;  // Without its samples (they are in `samples`).
  SeriesKey series;
  int64_t finished_ms = 0;
  double utilization = 0;  // 0: unknown (stored as NULL).
  PackedSamples samples;
  std::string branch;
  std::string git_sha;
  ResultVerdict verdict;
};

// How a lease is released by expiry: the state and columns the policy decided on.
struct LeaseRelease {
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  std::string error;
  std::optional<v1::Progress> progress;  // nullopt: cleared.
  bool set_finished = false;             // finished_ms = now; else kept.
};

// A jobs row selected with kJobColumns, read through a dialect's accessors by column index:
// Text(i), Int(i), Bytes(i), IsNull(i).
template <typename Columns>
absl::StatusOr<JobRow> ReadJobColumns(const Columns& c) {
  JobRow out;
  v1::Job& job = out.job;
  job.set_job_id(c.Text(0));
  job.set_idempotency_key(c.Text(1));
  if (absl::Status s = ParseStored(c.Bytes(2), job.mutable_spec(), "job spec"); !s.ok()) return s;
  job.set_state(static_cast<v1::JobState>(c.Int(3)));
  job.set_attempts(static_cast<int32_t>(c.Int(4)));
  job.set_worker_id(c.Text(5));
  out.lease_id = c.Text(6);
  out.lease_expires_ms = c.Int(7);
  job.set_created_unix_ms(c.Int(8));
  job.set_started_unix_ms(c.Int(9));
  job.set_finished_unix_ms(c.Int(10));
  job.set_error(c.Text(11));
  if (!c.IsNull(12)) {
    if (absl::Status s = ParseStored(c.Bytes(12), job.mutable_progress(), "job progress"); !s.ok()) return s;
  }
  return out;
}

class JobTables {
 public:
  virtual ~JobTables() = default;

  // lock: the row stays locked to this transaction (where the dialect locks rows). NOT_FOUND when absent.
  virtual absl::StatusOr<JobRow> LoadJob(absl::string_view job_id, bool lock) = 0;
  // The job whose lease_id is this one (lock as above), or nullopt.
  virtual absl::StatusOr<std::optional<JobRow>> FindByLease(absl::string_view lease_id, bool lock) = 0;
  // Sets state and finished_ms, nothing else (the lease stays).
  virtual absl::Status SetCancelled(absl::string_view job_id, v1::JobState state, int64_t finished_ms) = 0;
  // Claims the first of candidates (given oldest first) whose state is still `from` and that no other
  // transaction is claiming (where the dialect locks rows, such a row is passed over, not waited for),
  // and starts its new attempt: state `to`, attempts + 1, worker, lease; started_ms = now_ms,
  // finished_ms 0, error and progress cleared; then the worker's row as RefreshWorker leaves it.
  // Returns the row as written, or nullopt when no candidate is left. One statement where the dialect
  // can: a grant is the hot write of a busy queue.
  virtual absl::StatusOr<std::optional<v1::Job>> StartAttempt(const std::vector<std::string>& candidates,
                                                              v1::JobState from, v1::JobState to,
                                                              absl::string_view worker_id,
                                                              absl::string_view lease_id, int64_t expires_ms,
                                                              int64_t now_ms) = 0;
  // Moves the lease's expiry; records progress when given.
  virtual absl::Status SetLeaseExpiry(absl::string_view job_id, int64_t expires_ms, const v1::Progress* progress) = 0;
  // The row of the job holding lease_id, if that lease is live (expires after now_ms), with the
  // expiry moved to expires_ms and progress recorded when given; locked as FindByLease's; nullopt
  // when no job holds the lease or it has expired. Every report and lease extension starts here.
  // This default reads, checks and writes (FindByLease, SetLeaseExpiry); a dialect that can do it in
  // one statement overrides it.
  virtual absl::StatusOr<std::optional<JobRow>> ExtendLiveLease(absl::string_view lease_id, int64_t now_ms,
                                                                int64_t expires_ms, const v1::Progress* progress);
  // Ends the attempt: state and error written, lease cleared, finished_ms = now_ms unless already set.
  virtual absl::StatusOr<v1::Job> EndAttempt(absl::string_view job_id, v1::JobState state, absl::string_view error,
                                             int64_t now_ms) = 0;
  // Rows whose lease expired at or before now_ms, oldest first (locked; rows another transaction holds
  // may be passed over).
  virtual absl::StatusOr<std::vector<JobRow>> ExpiredLeases(int64_t now_ms) = 0;
  // Releases the lease as decided. Returns the row as written.
  virtual absl::StatusOr<v1::Job> ReleaseLease(absl::string_view job_id, const LeaseRelease& release,
                                               int64_t now_ms) = 0;
  virtual absl::Status DeleteAttemptResults(absl::string_view job_id, int32_t attempt) = 0;
  // Inserts or replaces the result keyed by (job, attempt, index); true when it was not stored before.
  virtual absl::StatusOr<bool> PutResult(const StoredResult& result) = 0;
  // Makes the result its series' latest point unless the stored point is newer.
  virtual absl::Status UpsertSeriesPoint(const StoredResult& result) = 0;
  // Recomputes a worker's state and current job from the leases it holds.
  virtual absl::Status RefreshWorker(absl::string_view worker_id) = 0;
};

}  // namespace kbench::server
