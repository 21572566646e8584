// The job lifecycle policy over a JobTables; see job_lifecycle.h.
#include "server/store/job_lifecycle.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "server/store/result_columns.h"

namespace kbench::server {

absl::StatusOr<std::optional<JobRow>> JobTables::ExtendLiveLease(absl::string_view lease_id, int64_t now_ms,
                                                                 int64_t expires_ms, const v1::Progress* progress) {
  absl::StatusOr<std::optional<JobRow>> row = FindByLease(lease_id, /*lock=*/true);
  if (!row.ok() || !row->has_value()) return row;
  if ((*row)->lease_expires_ms <= now_ms) return std::optional<JobRow>();
  if (absl::Status s = SetLeaseExpiry((*row)->job.job_id(), expires_ms, progress); !s.ok()) return s;
  (*row)->lease_expires_ms = expires_ms;
  if (progress != nullptr) *(*row)->job.mutable_progress() = *progress;
  return row;
}

}  // namespace kbench::server

namespace kbench::server::lifecycle {
namespace {

std::string LabelOf(const v1::Job& job, const std::string& name) {
  auto it = job.spec().labels().find(name);
  return it == job.spec().labels().end() ? std::string() : it->second;
}

// What an expired lease leaves of its job.
LeaseRelease ReleaseOf(const v1::Job& job, int max_attempts) {
  LeaseRelease out;
  if (job.state() != v1::RUNNING) {
    // A cancelled job whose worker vanished: it stays cancelled, the lease is simply released.
    out.state = job.state();
    out.error = job.error();
    if (job.has_progress()) out.progress = job.progress();
  } else if (job.attempts() < max_attempts) {
    out.state = v1::QUEUED;
  } else {
    out.state = v1::FAILED;
    out.error = absl::StrCat("lease expired on worker '", job.worker_id(), "' (attempt ", job.attempts(), " of ",
                             max_attempts, "); retries exhausted");
    out.set_finished = true;
  }
  return out;
}

}  // namespace

absl::Status LeaseGone(absl::string_view lease_id) {
  return absl::FailedPreconditionError(
      absl::StrCat("lease '", lease_id, "' expired or superseded; stop this attempt and lease again"));
}

absl::Status JobNotFound(absl::string_view job_id) {
  return absl::NotFoundError(absl::StrCat("job '", job_id, "' not found"));
}

absl::Status WorkerNotFound(absl::string_view worker_id) {
  return absl::NotFoundError(absl::StrCat("worker '", worker_id, "' is not registered; register again"));
}

absl::Status CheckVerdicts(const std::vector<v1::Result>& results, const std::vector<ResultVerdict>& verdicts) {
  if (verdicts.empty() || verdicts.size() == results.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("verdicts: ", verdicts.size(), " for ", results.size(), " results; give one per result or none"));
}

namespace {

// The live lease's row, its expiry moved to now_ms + ttl_ms and progress (when given) recorded.
absl::StatusOr<JobRow> ExtendLive(JobTables& t, absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                  const v1::Progress* progress) {
  // Expired means expired even before the reaper has run (as LiveLease).
  if (lease_id.empty()) return LeaseGone(lease_id);
  absl::StatusOr<std::optional<JobRow>> row = t.ExtendLiveLease(lease_id, now_ms, now_ms + ttl_ms, progress);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return LeaseGone(lease_id);
  return **std::move(row);
}

}  // namespace

absl::StatusOr<JobRow> LiveLease(JobTables& t, absl::string_view lease_id, int64_t now_ms, bool lock) {
  if (lease_id.empty()) return LeaseGone(lease_id);
  absl::StatusOr<std::optional<JobRow>> row = t.FindByLease(lease_id, lock);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return LeaseGone(lease_id);
  // Expired means expired even before the reaper has run: another coordinator replica may requeue it
  // at any moment, so accepting the report would race with a second worker's attempt.
  if ((*row)->lease_expires_ms <= now_ms) return LeaseGone(lease_id);
  return **std::move(row);
}

absl::StatusOr<Transition> Cancel(JobTables& t, absl::string_view job_id, int64_t now_ms) {
  absl::StatusOr<JobRow> row = t.LoadJob(job_id, /*lock=*/true);
  if (!row.ok()) return row.status();
  const v1::JobState previous = row->job.state();
  if (previous == v1::SUCCEEDED || previous == v1::FAILED)
    return absl::FailedPreconditionError(
        absl::StrCat("job '", job_id, "' already ", api::JobStateName(previous), "; nothing to cancel"));
  if (previous != v1::CANCELLED_JOB) {
    // The lease, if any, is kept: the worker holding it hears of the cancellation and completes.
    if (absl::Status s = t.SetCancelled(job_id, v1::CANCELLED_JOB, now_ms); !s.ok()) return s;
    row->job.set_state(v1::CANCELLED_JOB);
    row->job.set_finished_unix_ms(now_ms);
  }
  return Transition{std::move(row->job), previous};
}

absl::StatusOr<std::optional<Lease>> Grant(JobTables& t, const std::vector<std::string>& candidates,
                                           absl::string_view worker_id, absl::string_view lease_id, int64_t now_ms,
                                           int64_t ttl_ms) {
  const int64_t expires = now_ms + ttl_ms;
  absl::StatusOr<std::optional<v1::Job>> job =
      t.StartAttempt(candidates, v1::QUEUED, v1::RUNNING, worker_id, lease_id, expires, now_ms);
  if (!job.ok()) return job.status();
  if (!job->has_value()) return std::optional<Lease>();
  return std::optional<Lease>(Lease{**std::move(job), std::string(lease_id), expires});
}

absl::StatusOr<Lease> Extend(JobTables& t, absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                             const v1::Progress* progress) {
  absl::StatusOr<JobRow> row = ExtendLive(t, lease_id, now_ms, ttl_ms, progress);
  if (!row.ok()) return row.status();
  return Lease{std::move(row->job), std::string(lease_id), row->lease_expires_ms};
}

absl::StatusOr<ReportOutcome> Report(JobTables& t, absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                     const v1::Progress* progress, const std::vector<v1::Result>& results,
                                     const std::vector<ResultVerdict>& verdicts) {
  absl::StatusOr<JobRow> row = ExtendLive(t, lease_id, now_ms, ttl_ms, progress);
  if (!row.ok()) return row.status();
  const v1::Job& job = row->job;
  const std::string branch = LabelOf(job, "branch");
  const std::string git_sha = LabelOf(job, "git_sha");
  std::vector<int32_t> added;
  for (size_t i = 0; i < results.size(); ++i) {
    StoredResult s;
    s.result = results[i];
    v1::Result& r = s.result;
    // The coordinator, not the worker, is the authority on which job, attempt and worker this is.
    r.set_job_id(job.job_id());
    r.set_attempt(job.attempts());
    r.set_worker_id(job.worker_id());
    s.series = SeriesOf(r);
    s.finished_ms = r.finished_unix_ms() > 0 ? r.finished_unix_ms() : now_ms;
    s.utilization = Utilization(r);
    s.samples = PackSamples(r.timing().samples_ns());
    r.mutable_timing()->clear_samples_ns();
    s.branch = branch;
    s.git_sha = git_sha;
    if (!verdicts.empty()) s.verdict = verdicts[i];
    absl::StatusOr<bool> is_new = t.PutResult(s);
    if (!is_new.ok()) return is_new.status();
    if (s.verdict.tracked && r.status() == v1::OK) {
      if (absl::Status st = t.UpsertSeriesPoint(s); !st.ok()) return st;
    }
    if (*is_new) added.push_back(r.index());
  }
  return ReportOutcome{Lease{std::move(row->job), std::string(lease_id), row->lease_expires_ms}, std::move(added)};
}

absl::StatusOr<Transition> Complete(JobTables& t, absl::string_view lease_id, int64_t now_ms, bool failed,
                                    absl::string_view error) {
  absl::StatusOr<JobRow> row = LiveLease(t, lease_id, now_ms, /*lock=*/true);
  if (!row.ok()) return row.status();
  const v1::JobState previous = row->job.state();
  const v1::JobState next = previous == v1::CANCELLED_JOB ? previous : (failed ? v1::FAILED : v1::SUCCEEDED);
  absl::StatusOr<v1::Job> after = t.EndAttempt(row->job.job_id(), next, failed ? error : "", now_ms);
  if (!after.ok()) return after.status();
  if (absl::Status s = t.RefreshWorker(row->job.worker_id()); !s.ok()) return s;
  return Transition{*std::move(after), previous};
}

absl::StatusOr<std::vector<Transition>> RequeueExpired(JobTables& t, int64_t now_ms, int max_attempts) {
  absl::StatusOr<std::vector<JobRow>> expired = t.ExpiredLeases(now_ms);
  if (!expired.ok()) return expired.status();
  std::vector<Transition> out;
  std::set<std::string> workers;
  for (const JobRow& row : *expired) {
    const v1::Job& job = row.job;
    workers.insert(job.worker_id());
    if (job.state() == v1::RUNNING) {
      // The attempt's partial results go: the next attempt produces them again, and nothing may be
      // counted twice.
      if (absl::Status s = t.DeleteAttemptResults(job.job_id(), job.attempts()); !s.ok()) return s;
    }
    absl::StatusOr<v1::Job> after = t.ReleaseLease(job.job_id(), ReleaseOf(job, max_attempts), now_ms);
    if (!after.ok()) return after.status();
    out.push_back(Transition{*std::move(after), job.state()});
  }
  for (const std::string& w : workers)
    if (absl::Status s = t.RefreshWorker(w); !s.ok()) return s;
  return out;
}

}  // namespace kbench::server::lifecycle
