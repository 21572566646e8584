// The coordinator's durable state behind one interface: jobs, their leases, results (with their
// regression verdicts and series) and workers. SQLite implements it for one coordinator
// (sqlite_store.h), PostgreSQL for several replicas on one database (postgres_store.h, leases by
// SELECT ... FOR UPDATE SKIP LOCKED); the store test suite runs against both. What the job calls
// decide (requeue or fail, cancelled stays cancelled, result stamping, series upsert, lease expiry)
// is written once for both, in job_lifecycle.h, over each store's SQL (job_tables.h).
//
// Every mutating call is one transaction: when it returns OK the change is committed.
// Times are Unix milliseconds supplied by the caller, so the store never reads a clock itself.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/coordinator.pb.h"
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

// What AppendResults did.
struct ReportOutcome {
  Lease lease;                 // The extended lease (its job's state tells of a cancellation).
  std::vector<int32_t> added;  // Indexes of results that were not stored before.
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

// A worker's row with its registration as stored, not parsed: the fleet view (fleet_cache.h) parses
// only the registrations that changed since its last read, and on PostgreSQL reads only those.
struct WorkerRow {
  std::string worker_id;
  std::string registration;  // The serialized v1::WorkerInfo (its worker_id is the row's).
  // Changes whenever the registration does; 0 where the store keeps no versions (SQLite).
  int64_t registration_version = 0;
  // The registration was left out (registration is empty): the reader said it holds this version.
  bool registration_left_out = false;
  int64_t last_heartbeat_unix_ms = 0;
  std::string state;
  std::string current_job_id;
};

// Whether a reader of the workers already holds this worker's registration at this version.
using HaveRegistration = std::function<bool(const std::string& worker_id, int64_t version)>;

// A performance series: results of one op variant on one problem shape and dtype on one GPU model,
// measured the same way (cache mode, hot batch, backend): a HOT result is never judged against COLD
// baselines, nor a batch of 20 against a batch of 100.
struct SeriesKey {
  std::string op;
  std::string variant;
  std::string shape;      // SeriesShape() of the problem: "8192x4096", flags appended ("4096x128 causal").
  v1::Dtype dtype = v1::DTYPE_UNSPECIFIED;
  std::string gpu_model;  // Device name of the result.
  v1::CacheMode cache_mode = v1::COLD;     // COLD or HOT (UNSPECIFIED results are COLD).
  int32_t hot_batch = 1;                   // Launches per sample: 1 for COLD; the batch for HOT (0: unreported).
  v1::Backend backend = v1::BACKEND_UNSPECIFIED;  // The result's device backend (UNSPECIFIED: not reported).
  auto Tie() const { return std::tie(op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend); }
  bool operator<(const SeriesKey& o) const { return Tie() < o.Tie(); }
  bool operator==(const SeriesKey& o) const { return Tie() == o.Tie(); }
};

// What the coordinator decided about a result before storing it.
struct ResultVerdict {
  v1::Verdict verdict = v1::VERDICT_UNSPECIFIED;  // UNSPECIFIED: not judged (the result is not OK).
  double change_fraction = 0;                      // median / baseline median - 1.
  double p_value = 1;
  double baseline_median_ns = 0;                   // 0 without baseline.
  // The result becomes its series' latest point (the series gauges): OK, main branch, preset problem.
  bool tracked = false;
};

// A result of a series' baseline: an OK result on the baseline branch.
struct BaselineResult {
  // (job_id, attempt, index, revision) names one stored version of the result: the key is never
  // reused (an attempt's results are written only while its lease lives), and revision changes
  // whenever the row is written again (a result sent twice), so samples cached under it never go stale.
  std::string job_id;
  int32_t attempt = 0;
  int32_t index = 0;
  int64_t revision = 0;
  double median_ns = 0;
  std::vector<double> samples_ns;  // Raw samples, ascending; empty when the result carried none or omitted.
  bool samples_omitted = false;    // The caller holds them (HaveSamples returned true).
};

// Asked by BaselineResults with a row's key fields set (not its samples): true when the caller already
// holds that version's samples, which the store then need not read.
using HaveSamples = std::function<bool(const BaselineResult&)>;

// A stored OK result, as history shows it.
struct HistoryRow {
  SeriesKey series;
  std::string job_id;
  int64_t finished_unix_ms = 0;
  double median_ns = 0;
  double utilization = 0;  // 0 when unknown.
  ResultVerdict verdict;   // tracked is not stored and reads false.
  std::string branch;
  std::string git_sha;
  // Filled by the coordinator, not the store: the series' current run-to-run spread (relative sd of
  // its baseline's run medians) and the runs it is measured over.
  double series_run_spread = 0;
  int series_baseline_runs = 0;
  // Filled by the coordinator from the series' admin controls (series_controls.h), as they stand now.
  bool muted = false;
  double threshold_override = 0;  // 0: the coordinator's threshold.
};

// Which results History returns. Empty fields match everything.
struct HistoryQuery {
  std::string op;  // Required.
  std::string variant;
  std::string gpu_model_substring;  // Case-insensitive (ASCII).
  std::string shape;
  v1::Dtype dtype = v1::DTYPE_UNSPECIFIED;
  v1::CacheMode cache_mode = v1::CACHE_MODE_UNSPECIFIED;  // UNSPECIFIED: every mode.
  int32_t hot_batch = 0;                                  // 0: every batch.
  v1::Backend backend = v1::BACKEND_UNSPECIFIED;          // UNSPECIFIED: every backend.
  int limit = 100;
};

// The latest tracked point of a series (for the series gauges).
struct SeriesPoint {
  SeriesKey series;
  std::string job_id;
  int64_t finished_unix_ms = 0;
  double median_ns = 0;
  double utilization = 0;  // 0 when unknown.
  v1::Verdict verdict = v1::VERDICT_UNSPECIFIED;
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
  // The job holding a live lease, read without changing anything (so that its labels can be consulted
  // before a report). FAILED_PRECONDITION when the lease expired or was superseded.
  virtual absl::StatusOr<v1::Job> GetLeasedJob(absl::string_view lease_id, int64_t now_ms) = 0;
  // A whole report in one transaction: extends the lease as ExtendLease does, and stores results of its
  // attempt keyed by (job, attempt, index): a result sent twice is stored once (the later copy wins).
  // verdicts is empty or one per result; a tracked verdict also makes the result its series' latest
  // point when it is the newest. The series columns come from the result (device name, problem) and
  // the job's labels (branch, git_sha). added: the indexes that were not stored before.
  // FAILED_PRECONDITION when the lease expired or was superseded; INVALID_ARGUMENT when verdicts
  // has the wrong size.
  virtual absl::StatusOr<ReportOutcome> AppendResults(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                                      const v1::Progress* progress,
                                                      const std::vector<v1::Result>& results,
                                                      const std::vector<ResultVerdict>& verdicts) = 0;
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
  // The newest OK results of the series on branch (by finished time), newest first, at most limit,
  // leaving out the results of job exclude_job_id and those finished at or before after_ms (a known
  // step). Rows for which have_samples (when given) returns true come without their samples
  // (samples_omitted).
  virtual absl::StatusOr<std::vector<BaselineResult>> BaselineResults(const SeriesKey& series,
                                                                      absl::string_view branch, int limit,
                                                                      absl::string_view exclude_job_id,
                                                                      const HaveSamples& have_samples = nullptr,
                                                                      int64_t after_ms = 0) = 0;
  // The series' pinned reference: its oldest OK results on branch finished after after_ms (by
  // finished time), oldest first, at most limit, leaving out exclude_job_id's; without samples
  // (samples_omitted), median_ns set.
  virtual absl::StatusOr<std::vector<BaselineResult>> ReferenceResults(const SeriesKey& series,
                                                                       absl::string_view branch, int limit,
                                                                       absl::string_view exclude_job_id,
                                                                       int64_t after_ms = 0) = 0;
  // OK results matching the query, newest first.
  virtual absl::StatusOr<std::vector<HistoryRow>> History(const HistoryQuery& query) = 0;
  // The latest tracked point of every series that has one, ordered by series.
  virtual absl::StatusOr<std::vector<SeriesPoint>> ListSeries() = 0;

  // Admin controls of the series (server/coordinator/series_controls.h): recorded, never edited.
  // Stores control as given (who and when set by the caller) under a new id, greater than every
  // earlier one; returns it with that id.
  virtual absl::StatusOr<v1::SeriesControl> InsertSeriesControl(const v1::SeriesControl& control) = 0;
  // The controls of op (empty: every op), in id order.
  virtual absl::StatusOr<std::vector<v1::SeriesControl>> ListSeriesControls(absl::string_view op) = 0;

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
  // ListWorkers' rows in the same order, the registrations left unparsed. A store that keeps
  // registration versions (PostgreSQL) leaves out each registration `have` (may be null) says the
  // caller holds at the row's version: a thousand workers' heartbeats, not their ~9 MiB of catalogs.
  virtual absl::StatusOr<std::vector<WorkerRow>> ListWorkerRows(const HaveRegistration& have) = 0;
};

}  // namespace kbench::server
