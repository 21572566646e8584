// The job lifecycle policy, written once for every store: what a lease, a report, a completion, a
// cancellation and a lease's expiry do to a job, its results and its series. Each function runs inside
// the caller's transaction over a JobTables (job_tables.h), which writes what it is told in one SQL
// dialect; the stores (sqlite_store.cc, postgres_store.cc) open the transaction and read the queue for
// the jobs a worker can run, and the dialect claims one (JobTables::StartAttempt), the only step
// whose locking differs between dialects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/store/job_tables.h"
#include "server/store/store.h"

namespace kbench::server::lifecycle {

// The errors every store gives.
absl::Status LeaseGone(absl::string_view lease_id);
absl::Status JobNotFound(absl::string_view job_id);
absl::Status WorkerNotFound(absl::string_view worker_id);

// INVALID_ARGUMENT unless verdicts is empty or one per result (checked before any transaction).
absl::Status CheckVerdicts(const std::vector<v1::Result>& results, const std::vector<ResultVerdict>& verdicts);

// The job holding lease_id while the lease lives at now_ms; FAILED_PRECONDITION otherwise.
absl::StatusOr<JobRow> LiveLease(JobTables& t, absl::string_view lease_id, int64_t now_ms, bool lock);

// QUEUED or RUNNING -> CANCELLED_JOB (the lease is kept, so that its worker hears of it); a cancelled
// job stays as it is; FAILED_PRECONDITION for a finished one.
absl::StatusOr<Transition> Cancel(JobTables& t, absl::string_view job_id, int64_t now_ms);

// Leases the first of candidates (jobs the worker can run, oldest first) still QUEUED to worker_id:
// RUNNING, one more attempt, the lease live until now_ms + ttl_ms. nullopt when every candidate was
// taken meanwhile (by another replica's grant, a cancellation).
absl::StatusOr<std::optional<Lease>> Grant(JobTables& t, const std::vector<std::string>& candidates,
                                           absl::string_view worker_id, absl::string_view lease_id, int64_t now_ms,
                                           int64_t ttl_ms);

// Store::ExtendLease.
absl::StatusOr<Lease> Extend(JobTables& t, absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                             const v1::Progress* progress);

// Store::AppendResults (verdicts already checked): the lease extended, each result stamped by the
// coordinator's authority and stored, a tracked OK one made its series' latest point.
absl::StatusOr<ReportOutcome> Report(JobTables& t, absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                     const v1::Progress* progress, const std::vector<v1::Result>& results,
                                     const std::vector<ResultVerdict>& verdicts);

// Store::CompleteJob: SUCCEEDED or FAILED; a cancelled job stays cancelled.
absl::StatusOr<Transition> Complete(JobTables& t, absl::string_view lease_id, int64_t now_ms, bool failed,
                                    absl::string_view error);

// Store::RequeueExpired: a RUNNING job loses its attempt's results and is QUEUED again while
// attempts < max_attempts, else FAILED; a cancelled one just loses its lease.
absl::StatusOr<std::vector<Transition>> RequeueExpired(JobTables& t, int64_t now_ms, int max_attempts);

}  // namespace kbench::server::lifecycle
