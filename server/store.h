// The coordinator's durable state behind one interface: jobs, their leases, results and workers.
// SQLite implements it today (sqlite_store.h); a PostgreSQL store for several coordinator replicas
// plugs in behind the same calls (leases there become SELECT ... FOR UPDATE SKIP LOCKED), and the
// store test suite is written against this interface so that it can run on both.
//
// Every mutating call is one transaction: when it returns OK the change is committed.
// Times are Unix milliseconds supplied by the caller, so the store never reads a clock itself.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::server {

// A job granted to a worker for one attempt.
struct Lease {
  v1::Job job;               // After the lease: RUNNING, attempts incremented, worker_id set.
  std::string lease_id;      // Names this attempt.
  int64_t expires_unix_ms = 0;
};

// A job's state change, with the state it left (for metrics and callers that must know whether
// anything changed).
struct Transition {
  v1::Job job;  // After the change.
  v1::JobState previous_state = v1::JOB_STATE_UNSPECIFIED;
};

// Outcome of InsertJob.
struct InsertOutcome {
  v1::Job job;            // The stored job: the new one, or the earlier one with the same key.
  bool inserted = false;  // False when the idempotency key was already stored.
};

// A registered worker as stored.
struct WorkerRecord {
  v1::WorkerInfo info;
  int64_t last_heartbeat_unix_ms = 0;
  std::string state;           // "idle" or "busy" (holding a lease); "lost" is decided by the reader.
  std::string current_job_id;  // The most recently started job it holds, or empty.
};

// Decides whether a queued job may go to the leasing worker (selector and catalog matching).
using JobMatcher = std::function<bool(const v1::JobSpec&)>;

class Store {
 public:
  virtual ~Store() = default;

  // Jobs.
  // Stores a new job (its state should be QUEUED). When job.idempotency_key is non-empty and a job
  // with that key exists, stores nothing and returns the existing job with inserted = false.
  // ALREADY_EXISTS when job_id is taken.
  virtual absl::StatusOr<InsertOutcome> InsertJob(const v1::Job& job) = 0;
  // NOT_FOUND for an unknown id.
  virtual absl::StatusOr<v1::Job> GetJob(absl::string_view job_id) = 0;
  // The job submitted with this idempotency key, if any.
  virtual absl::StatusOr<std::optional<v1::Job>> FindJobByIdempotencyKey(absl::string_view key) = 0;
  // Newest first; state JOB_STATE_UNSPECIFIED: every state.
  virtual absl::StatusOr<std::vector<v1::Job>> ListJobs(int limit, v1::JobState state) = 0;
  virtual absl::StatusOr<std::map<v1::JobState, int64_t>> CountJobsByState() = 0;
  // QUEUED -> CANCELLED_JOB; RUNNING -> CANCELLED_JOB keeping the lease, so that the worker learns of
  // it (Heartbeat, ExtendLease) and can still complete. Cancelling a cancelled job changes nothing.
  // FAILED_PRECONDITION for a job that already SUCCEEDED or FAILED; NOT_FOUND for an unknown id.
  virtual absl::StatusOr<Transition> CancelJob(absl::string_view job_id, int64_t now_ms) = 0;

  // Leases.
  // Atomically picks the oldest QUEUED job for which matcher returns true and leases it to worker_id
  // under lease_id until now_ms + ttl_ms. nullopt when none matches.
  virtual absl::StatusOr<std::optional<Lease>> LeaseNextJob(absl::string_view worker_id, const JobMatcher& matcher,
                                                            int64_t now_ms, int64_t ttl_ms,
                                                            absl::string_view lease_id) = 0;
  // Extends a live lease to now_ms + ttl_ms and records progress (when given). The job may be
  // RUNNING or cancelled while held. FAILED_PRECONDITION when the lease expired or was superseded.
  virtual absl::StatusOr<Lease> ExtendLease(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                            const v1::Progress* progress) = 0;
  // Stores results of the lease's attempt, keyed by (job, attempt, index): a result sent twice is
  // stored once (the later copy wins). Returns the indexes that were not stored before.
  // FAILED_PRECONDITION when the lease expired or was superseded.
  virtual absl::StatusOr<std::vector<int32_t>> AppendResults(absl::string_view lease_id, int64_t now_ms,
                                                             const std::vector<v1::Result>& results) = 0;
  // Ends the attempt: RUNNING -> SUCCEEDED, or FAILED with error when failed; a cancelled job stays
  // cancelled. Releases the lease. FAILED_PRECONDITION when the lease expired or was superseded.
  virtual absl::StatusOr<Transition> CompleteJob(absl::string_view lease_id, int64_t now_ms, bool failed,
                                                 absl::string_view error) = 0;
  // Every lease that expired at or before now_ms is released: its attempt's results are deleted, and
  // a RUNNING job goes back to QUEUED when attempts < max_attempts, else to FAILED. A cancelled job
  // just loses its lease. Returns the jobs it changed.
  virtual absl::StatusOr<std::vector<Transition>> RequeueExpired(int64_t now_ms, int max_attempts) = 0;

  // Results.
  // The results of the job's latest attempt, ordered by index; samples_ns cleared unless asked for.
  virtual absl::StatusOr<std::vector<v1::Result>> GetResults(absl::string_view job_id, bool include_samples) = 0;

  // Workers.
  // Inserts or replaces a worker (info.worker_id must be set); counts as a heartbeat.
  virtual absl::Status UpsertWorker(const v1::WorkerInfo& info, int64_t now_ms) = 0;
  // Records a heartbeat; returns the cancelled jobs whose lease the worker still holds.
  // NOT_FOUND for an unknown worker.
  virtual absl::StatusOr<std::vector<std::string>> Heartbeat(absl::string_view worker_id, int64_t now_ms) = 0;
  // NOT_FOUND for an unknown worker.
  virtual absl::StatusOr<WorkerRecord> GetWorker(absl::string_view worker_id) = 0;
  // In order of first registration (re-registering keeps a worker's place), so that anything merged
  // over workers, such as the catalog, comes out the same every time.
  virtual absl::StatusOr<std::vector<WorkerRecord>> ListWorkers() = 0;
};

}  // namespace kbench::server
