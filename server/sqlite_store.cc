// SqliteStore: the Store's operations as SQL. Jobs, results and workers hold their protobuf messages
// serialized in BLOB columns, with the fields that queries filter or sort on in their own columns.
#include "server/sqlite_store.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "server/result_columns.h"
#include "server/sqlite_schema.h"
#include "server/sqlite_util.h"

namespace kbench::server {
namespace {

using sqlite::Statement;
using sqlite::Transaction;

// Column list shared by every query that reads whole jobs rows, in ReadJobRow's order.
constexpr absl::string_view kJobColumns =
    "job_id, idempotency_key, spec, state, attempts, worker_id, lease_id, lease_expires_ms, created_ms, "
    "started_ms, finished_ms, error, progress";

template <typename Message>
absl::Status ParseBlob(const std::string& blob, Message* out, absl::string_view what) {
  if (!out->ParseFromString(blob)) return absl::DataLossError(absl::StrCat("stored ", what, " does not parse"));
  return absl::OkStatus();
}

absl::Status LeaseGone(absl::string_view lease_id) {
  return absl::FailedPreconditionError(
      absl::StrCat("lease '", lease_id, "' expired or superseded; stop this attempt and lease again"));
}

absl::Status JobNotFound(absl::string_view job_id) {
  return absl::NotFoundError(absl::StrCat("job '", job_id, "' not found"));
}

std::string LabelOf(const v1::Job& job, const std::string& name) {
  auto it = job.spec().labels().find(name);
  return it == job.spec().labels().end() ? std::string() : it->second;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path, bool fsync_each_commit) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    absl::Status s = sqlite::Error(db, rc, absl::StrCat("open '", path, "'"));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, fsync_each_commit));
  // WAL lets readers (another process inspecting the file) proceed during writes; synchronous=FULL
  // makes each commit durable, which is the promise Submit makes (NORMAL keeps it across a restart of
  // the coordinator, not across a power loss); busy_timeout rides out a brief lock held by such a reader.
  for (const char* pragma : {"PRAGMA journal_mode=WAL",
                             fsync_each_commit ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                             "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000"}) {
    if (absl::Status s = sqlite::Exec(db, pragma); !s.ok()) return s;
  }
  if (absl::Status s = sqlite::Migrate(db); !s.ok()) return s;
  return store;
}

SqliteStore::~SqliteStore() {
  absl::MutexLock lock(&mu_);
  statements_.reset();
  sqlite3_close(db_);
}

namespace {

absl::StatusOr<v1::Job> ReadJob(const Statement& q, std::string* lease_id, int64_t* lease_expires_ms) {
  v1::Job job;
  job.set_job_id(q.Text(0));
  job.set_idempotency_key(q.Text(1));
  if (absl::Status s = ParseBlob(q.Blob(2), job.mutable_spec(), "job spec"); !s.ok()) return s;
  job.set_state(static_cast<v1::JobState>(q.Int(3)));
  job.set_attempts(static_cast<int32_t>(q.Int(4)));
  job.set_worker_id(q.Text(5));
  if (lease_id != nullptr) *lease_id = q.Text(6);
  if (lease_expires_ms != nullptr) *lease_expires_ms = q.Int(7);
  job.set_created_unix_ms(q.Int(8));
  job.set_started_unix_ms(q.Int(9));
  job.set_finished_unix_ms(q.Int(10));
  job.set_error(q.Text(11));
  if (!q.IsNull(12)) {
    if (absl::Status s = ParseBlob(q.Blob(12), job.mutable_progress(), "job progress"); !s.ok()) return s;
  }
  return job;
}

absl::StatusOr<WorkerRecord> ReadWorker(const Statement& q) {
  WorkerRecord w;
  if (absl::Status s = ParseBlob(q.Blob(1), &w.info, "worker info"); !s.ok()) return s;
  w.info.set_worker_id(q.Text(0));
  w.last_heartbeat_unix_ms = q.Int(2);
  w.state = q.Text(3);
  w.current_job_id = q.Text(4);
  return w;
}

}  // namespace

absl::StatusOr<SqliteStore::JobRow> SqliteStore::LoadJob(absl::string_view job_id) {
  Statement q(statements_.get(), absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE job_id = ?1"));
  q.BindText(1, job_id);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return JobNotFound(job_id);
  JobRow out;
  absl::StatusOr<v1::Job> job = ReadJob(q, &out.lease_id, &out.lease_expires_ms);
  if (!job.ok()) return job.status();
  out.job = *std::move(job);
  return out;
}

absl::StatusOr<SqliteStore::JobRow> SqliteStore::LoadLiveLease(absl::string_view lease_id, int64_t now_ms) {
  if (lease_id.empty()) return LeaseGone(lease_id);
  Statement q(statements_.get(), absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE lease_id = ?1"));
  q.BindText(1, lease_id);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return LeaseGone(lease_id);
  JobRow out;
  absl::StatusOr<v1::Job> job = ReadJob(q, &out.lease_id, &out.lease_expires_ms);
  if (!job.ok()) return job.status();
  out.job = *std::move(job);
  // Expired means expired even before the reaper has run: another coordinator replica may requeue it
  // at any moment, so accepting the report would race with a second worker's attempt.
  if (out.lease_expires_ms <= now_ms) return LeaseGone(lease_id);
  return out;
}

absl::Status SqliteStore::RefreshWorker(absl::string_view worker_id) {
  if (worker_id.empty()) return absl::OkStatus();
  Statement q(statements_.get(), R"sql(
UPDATE workers SET
  current_job_id = COALESCE((SELECT job_id FROM jobs WHERE worker_id = ?1 AND lease_id != ''
                             ORDER BY started_ms DESC, rowid DESC LIMIT 1), ''),
  state = CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE worker_id = ?1 AND lease_id != '') THEN 'busy' ELSE 'idle' END
WHERE worker_id = ?1)sql");
  q.BindText(1, worker_id);
  return q.Run();
}

absl::StatusOr<InsertOutcome> SqliteStore::InsertJob(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  if (!job.idempotency_key().empty()) {
    Statement q(statements_.get(), "SELECT job_id FROM jobs WHERE idempotency_key = ?1");
    q.BindText(1, job.idempotency_key());
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (*row) {
      absl::StatusOr<JobRow> existing = LoadJob(q.Text(0));
      if (!existing.ok()) return existing.status();
      return InsertOutcome{existing->job, false};
    }
  }
  Statement ins(statements_.get(), R"sql(
INSERT INTO jobs (job_id, idempotency_key, spec, state, attempts, worker_id, created_ms, started_ms, finished_ms,
                  error, progress)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11))sql");
  ins.BindText(1, job.job_id());
  if (job.idempotency_key().empty()) ins.BindNull(2);
  else ins.BindText(2, job.idempotency_key());
  ins.BindBlob(3, job.spec().SerializeAsString())
      .Bind(4, int64_t{job.state()})
      .Bind(5, int64_t{job.attempts()})
      .BindText(6, job.worker_id())
      .Bind(7, job.created_unix_ms())
      .Bind(8, job.started_unix_ms())
      .Bind(9, job.finished_unix_ms())
      .BindText(10, job.error());
  if (job.has_progress()) ins.BindBlob(11, job.progress().SerializeAsString());
  else ins.BindNull(11);
  if (absl::Status s = ins.Run(); !s.ok()) {
    if (absl::IsAlreadyExists(s)) return absl::AlreadyExistsError(absl::StrCat("job id '", job.job_id(), "' is taken"));
    return s;
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return InsertOutcome{job, true};
}

absl::StatusOr<v1::Job> SqliteStore::GetJob(absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobRow> row = LoadJob(job_id);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<std::optional<v1::Job>> SqliteStore::FindJobByIdempotencyKey(absl::string_view key) {
  absl::MutexLock lock(&mu_);
  if (key.empty()) return std::optional<v1::Job>();
  Statement q(statements_.get(), absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE idempotency_key = ?1"));
  q.BindText(1, key);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<v1::Job>();
  absl::StatusOr<v1::Job> job = ReadJob(q, nullptr, nullptr);
  if (!job.ok()) return job.status();
  return std::optional<v1::Job>(*std::move(job));
}

absl::StatusOr<std::vector<v1::Job>> SqliteStore::ListJobs(int limit, v1::JobState state) {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE (?1 = 0 OR state = ?1) ",
                                "ORDER BY created_ms DESC, rowid DESC LIMIT ?2"));
  q.Bind(1, int64_t{state}).Bind(2, int64_t{limit});
  std::vector<v1::Job> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<v1::Job> job = ReadJob(q, nullptr, nullptr);
    if (!job.ok()) return job.status();
    out.push_back(*std::move(job));
  }
  return out;
}

absl::StatusOr<std::map<v1::JobState, int64_t>> SqliteStore::CountJobsByState() {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  std::map<v1::JobState, int64_t> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out[static_cast<v1::JobState>(q.Int(0))] = q.Int(1);
  }
  return out;
}

absl::StatusOr<Transition> SqliteStore::CancelJob(absl::string_view job_id, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  absl::StatusOr<JobRow> row = LoadJob(job_id);
  if (!row.ok()) return row.status();
  const v1::JobState previous = row->job.state();
  if (previous == v1::SUCCEEDED || previous == v1::FAILED)
    return absl::FailedPreconditionError(
        absl::StrCat("job '", job_id, "' already ", api::JobStateName(previous), "; nothing to cancel"));
  if (previous != v1::CANCELLED_JOB) {
    // The lease, if any, is kept: the worker holding it hears of the cancellation and completes.
    Statement q(statements_.get(), "UPDATE jobs SET state = ?2, finished_ms = ?3 WHERE job_id = ?1");
    q.BindText(1, job_id).Bind(2, int64_t{v1::CANCELLED_JOB}).Bind(3, now_ms);
    if (absl::Status s = q.Run(); !s.ok()) return s;
    row = LoadJob(job_id);
    if (!row.ok()) return row.status();
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return Transition{std::move(row->job), previous};
}

absl::StatusOr<std::optional<Lease>> SqliteStore::LeaseNextJob(absl::string_view worker_id, const JobMatcher& matcher,
                                                               int64_t now_ms, int64_t ttl_ms,
                                                               absl::string_view lease_id) {
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  // Oldest first; a requeued job keeps its creation time and so goes to the front again.
  std::string chosen;
  {
    Statement q(statements_.get(), "SELECT job_id, spec FROM jobs WHERE state = ?1 ORDER BY created_ms, rowid");
    q.Bind(1, int64_t{v1::QUEUED});
    while (chosen.empty()) {
      absl::StatusOr<bool> row = q.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      v1::JobSpec spec;
      if (absl::Status s = ParseBlob(q.Blob(1), &spec, "job spec"); !s.ok()) return s;
      if (matcher(spec)) chosen = q.Text(0);
    }
  }
  if (chosen.empty()) return std::optional<Lease>();
  const int64_t expires = now_ms + ttl_ms;
  Statement up(statements_.get(), R"sql(
UPDATE jobs SET state = ?2, attempts = attempts + 1, worker_id = ?3, lease_id = ?4, lease_expires_ms = ?5,
                started_ms = ?6, finished_ms = 0, error = '', progress = NULL
WHERE job_id = ?1)sql");
  up.BindText(1, chosen)
      .Bind(2, int64_t{v1::RUNNING})
      .BindText(3, worker_id)
      .BindText(4, lease_id)
      .Bind(5, expires)
      .Bind(6, now_ms);
  if (absl::Status s = up.Run(); !s.ok()) return s;
  if (absl::Status s = RefreshWorker(worker_id); !s.ok()) return s;
  absl::StatusOr<JobRow> row = LoadJob(chosen);
  if (!row.ok()) return row.status();
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return std::optional<Lease>(Lease{std::move(row->job), std::string(lease_id), expires});
}

absl::Status SqliteStore::Extend(JobRow* row, int64_t now_ms, int64_t ttl_ms, const v1::Progress* progress) {
  Statement up(statements_.get(), progress != nullptr
                                      ? "UPDATE jobs SET lease_expires_ms = ?2, progress = ?3 WHERE job_id = ?1"
                                      : "UPDATE jobs SET lease_expires_ms = ?2 WHERE job_id = ?1");
  row->lease_expires_ms = now_ms + ttl_ms;
  up.BindText(1, row->job.job_id()).Bind(2, row->lease_expires_ms);
  if (progress != nullptr) {
    up.BindBlob(3, progress->SerializeAsString());
    *row->job.mutable_progress() = *progress;
  }
  return up.Run();
}

absl::StatusOr<Lease> SqliteStore::ExtendLease(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                               const v1::Progress* progress) {
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  absl::StatusOr<JobRow> row = LoadLiveLease(lease_id, now_ms);
  if (!row.ok()) return row.status();
  if (absl::Status s = Extend(&*row, now_ms, ttl_ms, progress); !s.ok()) return s;
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return Lease{std::move(row->job), std::string(lease_id), row->lease_expires_ms};
}

absl::StatusOr<v1::Job> SqliteStore::GetLeasedJob(absl::string_view lease_id, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobRow> row = LoadLiveLease(lease_id, now_ms);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<ReportOutcome> SqliteStore::AppendResults(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                                         const v1::Progress* progress,
                                                         const std::vector<v1::Result>& results,
                                                         const std::vector<ResultVerdict>& verdicts) {
  if (!verdicts.empty() && verdicts.size() != results.size())
    return absl::InvalidArgumentError(
        absl::StrCat("verdicts: ", verdicts.size(), " for ", results.size(), " results; give one per result or none"));
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  absl::StatusOr<JobRow> row = LoadLiveLease(lease_id, now_ms);
  if (!row.ok()) return row.status();
  if (absl::Status s = Extend(&*row, now_ms, ttl_ms, progress); !s.ok()) return s;
  const v1::Job& job = row->job;
  const std::string branch = LabelOf(job, "branch");
  const std::string git_sha = LabelOf(job, "git_sha");
  std::set<int64_t> stored;  // Indexes of this attempt already stored.
  {
    Statement q(statements_.get(), "SELECT idx FROM results WHERE job_id = ?1 AND attempt = ?2");
    q.BindText(1, job.job_id()).Bind(2, int64_t{job.attempts()});
    while (true) {
      absl::StatusOr<bool> more = q.Step();
      if (!more.ok()) return more.status();
      if (!*more) break;
      stored.insert(q.Int(0));
    }
  }
  Statement ins(statements_.get(), R"sql(
INSERT OR REPLACE INTO results (job_id, attempt, idx, op, variant, problem_label, dtype, status, median_ns, result,
                                shape, gpu_model, branch, git_sha, finished_ms, utilization, samples, verdict,
                                change_fraction, p_value, baseline_median_ns, samples_order)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22))sql");
  Statement series(statements_.get(), R"sql(
INSERT INTO series (op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
ON CONFLICT (op, variant, shape, dtype, gpu_model) DO UPDATE SET
  job_id = excluded.job_id, finished_ms = excluded.finished_ms, median_ns = excluded.median_ns,
  utilization = excluded.utilization, verdict = excluded.verdict
WHERE excluded.finished_ms >= series.finished_ms)sql");
  std::vector<int32_t> added;
  for (size_t i = 0; i < results.size(); ++i) {
    v1::Result r = results[i];
    const ResultVerdict verdict = verdicts.empty() ? ResultVerdict{} : verdicts[i];
    // The coordinator, not the worker, is the authority on which job, attempt and worker this is.
    r.set_job_id(job.job_id());
    r.set_attempt(job.attempts());
    r.set_worker_id(job.worker_id());
    const SeriesKey key = SeriesOf(r);
    const int64_t finished_ms = r.finished_unix_ms() > 0 ? r.finished_unix_ms() : now_ms;
    const double utilization = Utilization(r);
    const PackedSamples samples = PackSamples(r.timing().samples_ns());
    r.mutable_timing()->clear_samples_ns();
    ins.Reset();
    ins.BindText(1, job.job_id())
        .Bind(2, int64_t{job.attempts()})
        .Bind(3, int64_t{r.index()})
        .BindText(4, r.op())
        .BindText(5, r.variant())
        .BindText(6, api::ProblemLabel(r.problem()))
        .Bind(7, int64_t{r.problem().dtype()})
        .Bind(8, int64_t{r.status()});
    if (r.has_timing()) ins.Bind(9, r.timing().median_ns());
    ins.BindBlob(10, r.SerializeAsString())
        .BindText(11, key.shape)
        .BindText(12, key.gpu_model)
        .BindText(13, branch)
        .BindText(14, git_sha)
        .Bind(15, finished_ms);
    if (utilization > 0) ins.Bind(16, utilization);
    ins.BindBlob(17, samples.sorted)
        .Bind(18, int64_t{verdict.verdict})
        .Bind(19, verdict.change_fraction)
        .Bind(20, verdict.p_value)
        .Bind(21, verdict.baseline_median_ns)
        .BindBlob(22, samples.order);
    if (absl::Status s = ins.Run(); !s.ok()) return s;
    if (verdict.tracked && r.status() == v1::OK) {
      series.Reset();
      series.BindText(1, key.op)
          .BindText(2, key.variant)
          .BindText(3, key.shape)
          .Bind(4, int64_t{key.dtype})
          .BindText(5, key.gpu_model)
          .BindText(6, job.job_id())
          .Bind(7, finished_ms)
          .Bind(8, r.timing().median_ns());
      if (utilization > 0) series.Bind(9, utilization);
      series.Bind(10, int64_t{verdict.verdict});
      if (absl::Status s = series.Run(); !s.ok()) return s;
    }
    if (stored.insert(r.index()).second) added.push_back(r.index());
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return ReportOutcome{Lease{std::move(row->job), std::string(lease_id), row->lease_expires_ms}, std::move(added)};
}

absl::StatusOr<Transition> SqliteStore::CompleteJob(absl::string_view lease_id, int64_t now_ms, bool failed,
                                                    absl::string_view error) {
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  absl::StatusOr<JobRow> row = LoadLiveLease(lease_id, now_ms);
  if (!row.ok()) return row.status();
  const v1::JobState previous = row->job.state();
  const v1::JobState next = previous == v1::CANCELLED_JOB ? previous : (failed ? v1::FAILED : v1::SUCCEEDED);
  Statement up(statements_.get(), R"sql(
UPDATE jobs SET state = ?2, lease_id = '', lease_expires_ms = 0, error = ?3,
                finished_ms = CASE WHEN finished_ms = 0 THEN ?4 ELSE finished_ms END
WHERE job_id = ?1)sql");
  up.BindText(1, row->job.job_id()).Bind(2, int64_t{next}).BindText(3, failed ? error : "").Bind(4, now_ms);
  if (absl::Status s = up.Run(); !s.ok()) return s;
  if (absl::Status s = RefreshWorker(row->job.worker_id()); !s.ok()) return s;
  absl::StatusOr<JobRow> after = LoadJob(row->job.job_id());
  if (!after.ok()) return after.status();
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return Transition{std::move(after->job), previous};
}

absl::StatusOr<std::vector<Transition>> SqliteStore::RequeueExpired(int64_t now_ms, int max_attempts) {
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  std::vector<JobRow> expired;
  {
    // Runs before every lease: `lease_id > ''` (the same rows as != '') and the unary + on the sort key
    // make SQLite search jobs_by_lease for the few leased jobs instead of scanning every job ever
    // submitted in created order.
    Statement q(statements_.get(), absl::StrCat("SELECT ", kJobColumns,
                                                " FROM jobs WHERE lease_id > '' AND lease_expires_ms <= ?1 ",
                                  "ORDER BY +created_ms, rowid"));
    q.Bind(1, now_ms);
    while (true) {
      absl::StatusOr<bool> row = q.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      JobRow r;
      absl::StatusOr<v1::Job> job = ReadJob(q, &r.lease_id, &r.lease_expires_ms);
      if (!job.ok()) return job.status();
      r.job = *std::move(job);
      expired.push_back(std::move(r));
    }
  }
  std::vector<Transition> out;
  std::set<std::string> workers;
  for (const JobRow& r : expired) {
    const v1::Job& job = r.job;
    workers.insert(job.worker_id());
    if (job.state() == v1::RUNNING) {
      // The attempt's partial results go: the next attempt produces them again, and nothing may be
      // counted twice.
      Statement del(statements_.get(), "DELETE FROM results WHERE job_id = ?1 AND attempt = ?2");
      del.BindText(1, job.job_id()).Bind(2, int64_t{job.attempts()});
      if (absl::Status s = del.Run(); !s.ok()) return s;
    }
    Statement up(statements_.get(), R"sql(
UPDATE jobs SET state = ?2, lease_id = '', lease_expires_ms = 0, error = ?3, progress = ?4,
                finished_ms = CASE WHEN ?5 THEN ?6 ELSE finished_ms END
WHERE job_id = ?1)sql");
    up.BindText(1, job.job_id());
    if (job.state() != v1::RUNNING) {
      // A cancelled job whose worker vanished: it stays cancelled, the lease is simply released.
      up.Bind(2, int64_t{job.state()}).BindText(3, job.error());
      if (job.has_progress()) up.BindBlob(4, job.progress().SerializeAsString());
      else up.BindNull(4);
      up.Bind(5, int64_t{0}).Bind(6, now_ms);
    } else if (job.attempts() < max_attempts) {
      up.Bind(2, int64_t{v1::QUEUED}).BindText(3, "").BindNull(4).Bind(5, int64_t{0}).Bind(6, now_ms);
    } else {
      up.Bind(2, int64_t{v1::FAILED})
          .BindText(3, absl::StrCat("lease expired on worker '", job.worker_id(), "' (attempt ", job.attempts(),
                                    " of ", max_attempts, "); retries exhausted"))
          .BindNull(4)
          .Bind(5, int64_t{1})
          .Bind(6, now_ms);
    }
    if (absl::Status s = up.Run(); !s.ok()) return s;
    absl::StatusOr<JobRow> after = LoadJob(job.job_id());
    if (!after.ok()) return after.status();
    out.push_back(Transition{std::move(after->job), job.state()});
  }
  for (const std::string& w : workers)
    if (absl::Status s = RefreshWorker(w); !s.ok()) return s;
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<v1::Result>> SqliteStore::GetResults(absl::string_view job_id, bool include_samples) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobRow> job = LoadJob(job_id);
  if (!job.ok()) return job.status();
  // Only the current attempt: earlier attempts' rows are deleted when they expire, and this keeps a
  // store that retained them from mixing attempts.
  Statement q(statements_.get(),
              absl::StrCat("SELECT result, ", include_samples ? "samples, samples_order" : "NULL, NULL",
                           " FROM results WHERE job_id = ?1 AND attempt = ?2 ORDER BY idx"));
  q.BindText(1, job_id).Bind(2, int64_t{job->job.attempts()});
  std::vector<v1::Result> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    v1::Result r;
    if (absl::Status s = ParseBlob(q.Blob(0), &r, "result"); !s.ok()) return s;
    if (!include_samples) {
      r.mutable_timing()->clear_samples_ns();
    } else if (!q.IsNull(1)) {
      for (double d : UnpackInOrder(q.Blob(1), q.Blob(2))) r.mutable_timing()->add_samples_ns(d);
    }
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<BaselineResult>> SqliteStore::BaselineResults(const SeriesKey& series,
                                                                         absl::string_view branch, int limit,
                                                                         absl::string_view exclude_job_id,
                                                                         const HaveSamples& have_samples) {
  absl::MutexLock lock(&mu_);
  // The rowid is the revision: INSERT OR REPLACE gives the new row a rowid above every existing one.
  Statement q(statements_.get(), R"sql(
SELECT job_id, median_ns, samples, attempt, idx, rowid FROM results
WHERE op = ?1 AND variant = ?2 AND shape = ?3 AND dtype = ?4 AND gpu_model = ?5 AND branch = ?6 AND status = ?7
  AND job_id != ?8
ORDER BY finished_ms DESC, rowid DESC LIMIT ?9)sql");
  q.BindText(1, series.op)
      .BindText(2, series.variant)
      .BindText(3, series.shape)
      .Bind(4, int64_t{series.dtype})
      .BindText(5, series.gpu_model)
      .BindText(6, branch)
      .Bind(7, int64_t{v1::OK})
      .BindText(8, exclude_job_id)
      .Bind(9, int64_t{limit});
  std::vector<BaselineResult> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    BaselineResult& b = out.emplace_back();
    b.job_id = q.Text(0);
    b.attempt = static_cast<int32_t>(q.Int(3));
    b.index = static_cast<int32_t>(q.Int(4));
    b.revision = q.Int(5);
    b.median_ns = q.Double(1);
    // SQLite reads a column only when asked: a sample blob the caller holds is never copied out.
    b.samples_omitted = have_samples && have_samples(b);
    if (!b.samples_omitted) b.samples_ns = UnpackSorted(q.BlobView(2));
  }
  return out;
}

absl::StatusOr<std::vector<HistoryRow>> SqliteStore::History(const HistoryQuery& query) {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict, change_fraction,
       p_value, baseline_median_ns, branch, git_sha
FROM results
WHERE op = ?1 AND status = ?2 AND (?3 = '' OR variant = ?3) AND (?4 = '' OR instr(lower(gpu_model), lower(?4)) > 0)
  AND (?5 = '' OR shape = ?5) AND (?6 = 0 OR dtype = ?6)
ORDER BY finished_ms DESC, rowid DESC LIMIT ?7)sql");
  q.BindText(1, query.op)
      .Bind(2, int64_t{v1::OK})
      .BindText(3, query.variant)
      .BindText(4, query.gpu_model_substring)
      .BindText(5, query.shape)
      .Bind(6, int64_t{query.dtype})
      .Bind(7, int64_t{query.limit});
  std::vector<HistoryRow> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    HistoryRow h;
    h.series = SeriesKey{q.Text(0), q.Text(1), q.Text(2), static_cast<v1::Dtype>(q.Int(3)), q.Text(4)};
    h.job_id = q.Text(5);
    h.finished_unix_ms = q.Int(6);
    h.median_ns = q.Double(7);
    h.utilization = q.Double(8);
    h.verdict.verdict = static_cast<v1::Verdict>(q.Int(9));
    h.verdict.change_fraction = q.Double(10);
    h.verdict.p_value = q.Double(11);
    h.verdict.baseline_median_ns = q.Double(12);
    h.branch = q.Text(13);
    h.git_sha = q.Text(14);
    out.push_back(std::move(h));
  }
  return out;
}

absl::StatusOr<std::vector<SeriesPoint>> SqliteStore::ListSeries() {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict FROM series
ORDER BY op, variant, shape, dtype, gpu_model)sql");
  std::vector<SeriesPoint> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    SeriesPoint p;
    p.series = SeriesKey{q.Text(0), q.Text(1), q.Text(2), static_cast<v1::Dtype>(q.Int(3)), q.Text(4)};
    p.job_id = q.Text(5);
    p.finished_unix_ms = q.Int(6);
    p.median_ns = q.Double(7);
    p.utilization = q.Double(8);
    p.verdict = static_cast<v1::Verdict>(q.Int(9));
    out.push_back(std::move(p));
  }
  return out;
}

absl::Status SqliteStore::UpsertWorker(const v1::WorkerInfo& info, int64_t now_ms) {
  if (info.worker_id().empty()) return absl::InvalidArgumentError("worker info has no worker_id");
  absl::MutexLock lock(&mu_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  Statement q(statements_.get(), R"sql(
INSERT INTO workers (worker_id, info, last_heartbeat_ms) VALUES (?1, ?2, ?3)
ON CONFLICT(worker_id) DO UPDATE SET info = excluded.info, last_heartbeat_ms = excluded.last_heartbeat_ms)sql");
  q.BindText(1, info.worker_id()).BindBlob(2, info.SerializeAsString()).Bind(3, now_ms);
  if (absl::Status s = q.Run(); !s.ok()) return s;
  if (absl::Status s = RefreshWorker(info.worker_id()); !s.ok()) return s;
  return tx.Commit();
}

absl::StatusOr<std::vector<std::string>> SqliteStore::Heartbeat(absl::string_view worker_id, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  // A heartbeat is soft state: losing the last ones to a power loss harms nothing, so its commit is not
  // fsynced (the next durable commit's fsync covers its WAL frames anyway). A fleet's heartbeats are
  // most of the coordinator's commits, and each fsync would hold the store's one connection meanwhile.
  if (fsync_each_commit_) {
    if (absl::Status s = sqlite::Exec(db_, "PRAGMA synchronous=NORMAL"); !s.ok()) return s;
  }
  struct Restore {
    sqlite3* db;
    bool full;
    ~Restore() {
      if (full) (void)sqlite::Exec(db, "PRAGMA synchronous=FULL");
    }
  } restore{db_, fsync_each_commit_};
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  Statement up(statements_.get(), "UPDATE workers SET last_heartbeat_ms = ?2 WHERE worker_id = ?1");
  up.BindText(1, worker_id).Bind(2, now_ms);
  if (absl::Status s = up.Run(); !s.ok()) return s;
  if (sqlite3_changes(db_) == 0)
    return absl::NotFoundError(absl::StrCat("worker '", worker_id, "' is not registered; register again"));
  Statement q(statements_.get(),
              "SELECT job_id FROM jobs WHERE worker_id = ?1 AND lease_id > '' AND state = ?2 ORDER BY +created_ms");
  q.BindText(1, worker_id).Bind(2, int64_t{v1::CANCELLED_JOB});
  std::vector<std::string> cancelled;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    cancelled.push_back(q.Text(0));
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return cancelled;
}

absl::StatusOr<WorkerRecord> SqliteStore::GetWorker(absl::string_view worker_id) {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(),
              "SELECT worker_id, info, last_heartbeat_ms, state, current_job_id FROM workers WHERE worker_id = ?1");
  q.BindText(1, worker_id);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("worker '", worker_id, "' is not registered; register again"));
  return ReadWorker(q);
}

absl::StatusOr<std::vector<WorkerRecord>> SqliteStore::ListWorkers() {
  // The rows are copied under the lock and parsed after it: a fleet's registrations (catalogs of
  // several KiB each) take long to parse, and every other call waits for the lock meanwhile.
  std::vector<WorkerRecord> out;
  std::vector<std::string> infos;
  {
    absl::MutexLock lock(&mu_);
    Statement q(statements_.get(),
                "SELECT worker_id, info, last_heartbeat_ms, state, current_job_id FROM workers ORDER BY rowid");
    while (true) {
      absl::StatusOr<bool> row = q.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      WorkerRecord& w = out.emplace_back();
      w.info.set_worker_id(q.Text(0));
      w.last_heartbeat_unix_ms = q.Int(2);
      w.state = q.Text(3);
      w.current_job_id = q.Text(4);
      infos.push_back(q.Blob(1));
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string id = out[i].info.worker_id();
    if (absl::Status s = ParseBlob(infos[i], &out[i].info, "worker info"); !s.ok()) return s;
    out[i].info.set_worker_id(id);
  }
  return out;
}

}  // namespace kbench::server
