// PostgresStore: the Store's operations as SQL over libpq. The same columns as the SQLite store
// (protobuf messages serialized in BYTEA, the fields queries filter or sort on in their own columns).
#include "server/postgres_store.h"

#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "server/pg_schema.h"
#include "server/result_columns.h"

namespace kbench::server {
namespace {

using pg::Connection;
using pg::Params;
using pg::Rows;

constexpr int kTransactionAttempts = 5;
constexpr int kLeasePage = 64;  // Queued jobs read per round while looking for one the worker can run.

// Column list shared by every query that reads whole jobs rows, in ReadJob's order.
constexpr absl::string_view kJobColumns =
    "job_id, idempotency_key, spec, state, attempts, worker_id, lease_id, lease_expires_ms, created_ms, "
    "started_ms, finished_ms, error, progress";
constexpr absl::string_view kWorkerColumns = "worker_id, info, last_heartbeat_ms, state, current_job_id";

// A jobs row: the API's Job plus the lease columns it does not carry.
struct JobRow {
  v1::Job job;
  std::string lease_id;
  int64_t lease_expires_ms = 0;
};

const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

template <typename Message>
absl::Status ParseBytes(const std::string& bytes, Message* out, absl::string_view what) {
  if (!out->ParseFromString(bytes)) return absl::DataLossError(absl::StrCat("stored ", what, " does not parse"));
  return absl::OkStatus();
}

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

std::string LabelOf(const v1::Job& job, const std::string& name) {
  auto it = job.spec().labels().find(name);
  return it == job.spec().labels().end() ? std::string() : it->second;
}

absl::StatusOr<JobRow> ReadJob(const Rows& r, int row) {
  JobRow out;
  v1::Job& job = out.job;
  job.set_job_id(r.Text(row, 0));
  job.set_idempotency_key(r.Text(row, 1));
  if (absl::Status s = ParseBytes(r.Text(row, 2), job.mutable_spec(), "job spec"); !s.ok()) return s;
  job.set_state(static_cast<v1::JobState>(r.Int(row, 3)));
  job.set_attempts(static_cast<int32_t>(r.Int(row, 4)));
  job.set_worker_id(r.Text(row, 5));
  out.lease_id = r.Text(row, 6);
  out.lease_expires_ms = r.Int(row, 7);
  job.set_created_unix_ms(r.Int(row, 8));
  job.set_started_unix_ms(r.Int(row, 9));
  job.set_finished_unix_ms(r.Int(row, 10));
  job.set_error(r.Text(row, 11));
  if (!r.IsNull(row, 12)) {
    if (absl::Status s = ParseBytes(r.Text(row, 12), job.mutable_progress(), "job progress"); !s.ok()) return s;
  }
  return out;
}

absl::StatusOr<WorkerRecord> ReadWorker(const Rows& r, int row) {
  WorkerRecord w;
  if (absl::Status s = ParseBytes(r.Text(row, 1), &w.info, "worker info"); !s.ok()) return s;
  w.info.set_worker_id(r.Text(row, 0));
  w.last_heartbeat_unix_ms = r.Int(row, 2);
  w.state = r.Text(row, 3);
  w.current_job_id = r.Text(row, 4);
  return w;
}

// The job, locked for the rest of the transaction when lock is set.
absl::StatusOr<JobRow> LoadJob(Connection& c, absl::string_view job_id, bool lock) {
  absl::StatusOr<Rows> r = c.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE job_id = $1",
                                                lock ? " FOR UPDATE" : ""),
                                   Params().Text(job_id));
  if (!r.ok()) return r.status();
  if (r->size() == 0) return JobNotFound(job_id);
  return ReadJob(*r, 0);
}

// The job holding lease_id (locked for the rest of the transaction unless lock is false), when the
// lease is still live at now_ms; FAILED_PRECONDITION otherwise.
absl::StatusOr<JobRow> LoadLiveLease(Connection& c, absl::string_view lease_id, int64_t now_ms, bool lock = true) {
  if (lease_id.empty()) return LeaseGone(lease_id);
  absl::StatusOr<Rows> r = c.Query(
      absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE lease_id = $1", lock ? " FOR UPDATE" : ""),
      Params().Text(lease_id));
  if (!r.ok()) return r.status();
  if (r->size() == 0) return LeaseGone(lease_id);
  absl::StatusOr<JobRow> row = ReadJob(*r, 0);
  if (!row.ok()) return row.status();
  // Expired means expired even before a reaper has run: another replica may requeue it at any moment.
  if (row->lease_expires_ms <= now_ms) return LeaseGone(lease_id);
  return row;
}

// Moves a locked live lease's expiry to now_ms + ttl_ms and records progress (when given), in row too.
absl::Status Extend(Connection& c, JobRow* row, int64_t now_ms, int64_t ttl_ms, const v1::Progress* progress) {
  row->lease_expires_ms = now_ms + ttl_ms;
  absl::StatusOr<Rows> up =
      progress != nullptr
          ? c.Query("UPDATE jobs SET lease_expires_ms = $2, progress = $3 WHERE job_id = $1",
                    Params().Text(row->job.job_id()).Int(row->lease_expires_ms).Bytes(progress->SerializeAsString()))
          : c.Query("UPDATE jobs SET lease_expires_ms = $2 WHERE job_id = $1",
                    Params().Text(row->job.job_id()).Int(row->lease_expires_ms));
  if (!up.ok()) return up.status();
  if (progress != nullptr) *row->job.mutable_progress() = *progress;
  return absl::OkStatus();
}

// Recomputes a worker's state and current job from the leases it holds.
absl::Status RefreshWorker(Connection& c, absl::string_view worker_id) {
  if (worker_id.empty()) return absl::OkStatus();
  return c.Query(R"sql(
UPDATE workers SET
  current_job_id = COALESCE((SELECT job_id FROM jobs WHERE worker_id = $1 AND lease_id != ''
                             ORDER BY started_ms DESC, seq DESC LIMIT 1), ''),
  state = CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE worker_id = $1 AND lease_id != '') THEN 'busy' ELSE 'idle' END
WHERE worker_id = $1)sql",
                 Params().Text(worker_id))
      .status();
}

}  // namespace

bool IsPostgresUri(absl::string_view db) {
  return absl::StartsWith(db, "postgresql://") || absl::StartsWith(db, "postgres://");
}

template <typename Body>
auto PostgresStore::Transact(Body body) -> decltype(body(std::declval<pg::Connection&>())) {
  using Result = decltype(body(std::declval<pg::Connection&>()));
  pg::Pool::Handle conn = pool_->Acquire();
  Result result = absl::InternalError("postgres: transaction not attempted");
  for (int attempt = 0; attempt < kTransactionAttempts; ++attempt) {
    if (!conn->EnsureConnected()) return absl::UnavailableError("postgres: connection lost; reconnecting failed");
    if (absl::Status s = conn->Exec("BEGIN"); !s.ok()) return s;
    result = body(*conn);
    if (result.ok()) {
      absl::Status committed = conn->Exec("COMMIT");
      if (committed.ok()) return result;
      result = committed;
    } else {
      (void)conn->Exec("ROLLBACK");
    }
    if (!absl::IsAborted(StatusOf(result))) return result;
  }
  return result;
}

template <typename Body>
auto PostgresStore::Read(Body body) -> decltype(body(std::declval<pg::Connection&>())) {
  pg::Pool::Handle conn = pool_->Acquire();
  if (!conn->EnsureConnected()) return absl::UnavailableError("postgres: connection lost; reconnecting failed");
  return body(*conn);
}

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& conninfo, int pool_size) {
  absl::StatusOr<std::unique_ptr<pg::Pool>> pool = pg::Pool::Open(conninfo, pool_size);
  if (!pool.ok()) return pool.status();
  std::unique_ptr<PostgresStore> store(new PostgresStore(*std::move(pool)));
  {
    pg::Pool::Handle conn = store->pool_->Acquire();
    if (absl::Status s = pg::Migrate(*conn); !s.ok()) return s;
  }
  return store;
}

absl::StatusOr<InsertOutcome> PostgresStore::InsertJob(const v1::Job& job) {
  return Transact([&](Connection& c) -> absl::StatusOr<InsertOutcome> {
    auto by_key = [&]() -> absl::StatusOr<std::optional<JobRow>> {
      absl::StatusOr<Rows> r = c.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE idempotency_key = $1"),
                                       Params().Text(job.idempotency_key()));
      if (!r.ok()) return r.status();
      if (r->size() == 0) return std::optional<JobRow>();
      absl::StatusOr<JobRow> row = ReadJob(*r, 0);
      if (!row.ok()) return row.status();
      return std::optional<JobRow>(*std::move(row));
    };
    if (!job.idempotency_key().empty()) {
      absl::StatusOr<std::optional<JobRow>> existing = by_key();
      if (!existing.ok()) return existing.status();
      if (existing->has_value()) return InsertOutcome{(*existing)->job, false};
    }
    Params p;
    p.Text(job.job_id());
    if (job.idempotency_key().empty()) p.NullText();
    else p.Text(job.idempotency_key());
    p.Bytes(job.spec().SerializeAsString())
        .Int(job.state())
        .Int(job.attempts())
        .Text(job.worker_id())
        .Int(job.created_unix_ms())
        .Int(job.started_unix_ms())
        .Int(job.finished_unix_ms())
        .Text(job.error());
    if (job.has_progress()) p.Bytes(job.progress().SerializeAsString());
    else p.NullBytes();
    // ON CONFLICT covers both the key (another replica's concurrent submission) and the id.
    absl::StatusOr<Rows> ins = c.Query(R"sql(
INSERT INTO jobs (job_id, idempotency_key, spec, state, attempts, worker_id, created_ms, started_ms, finished_ms,
                  error, progress)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT DO NOTHING)sql",
                                       p);
    if (!ins.ok()) return ins.status();
    if (ins->Affected() == 1) return InsertOutcome{job, true};
    if (!job.idempotency_key().empty()) {
      absl::StatusOr<std::optional<JobRow>> existing = by_key();
      if (!existing.ok()) return existing.status();
      if (existing->has_value()) return InsertOutcome{(*existing)->job, false};
    }
    return absl::AlreadyExistsError(absl::StrCat("job id '", job.job_id(), "' is taken"));
  });
}

absl::StatusOr<v1::Job> PostgresStore::GetJob(absl::string_view job_id) {
  return Read([&](Connection& c) -> absl::StatusOr<v1::Job> {
    absl::StatusOr<JobRow> row = LoadJob(c, job_id, false);
    if (!row.ok()) return row.status();
    return std::move(row->job);
  });
}

absl::StatusOr<std::optional<v1::Job>> PostgresStore::FindJobByIdempotencyKey(absl::string_view key) {
  if (key.empty()) return std::optional<v1::Job>();
  return Read([&](Connection& c) -> absl::StatusOr<std::optional<v1::Job>> {
    absl::StatusOr<Rows> r =
        c.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE idempotency_key = $1"), Params().Text(key));
    if (!r.ok()) return r.status();
    if (r->size() == 0) return std::optional<v1::Job>();
    absl::StatusOr<JobRow> row = ReadJob(*r, 0);
    if (!row.ok()) return row.status();
    return std::optional<v1::Job>(std::move(row->job));
  });
}

absl::StatusOr<std::vector<v1::Job>> PostgresStore::ListJobs(int limit, v1::JobState state) {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<v1::Job>> {
    absl::StatusOr<Rows> r = c.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE ($1 = 0 OR state = $1) ",
                                                  "ORDER BY created_ms DESC, seq DESC LIMIT $2"),
                                     Params().Int(state).Int(limit));
    if (!r.ok()) return r.status();
    std::vector<v1::Job> out;
    for (int i = 0; i < r->size(); ++i) {
      absl::StatusOr<JobRow> row = ReadJob(*r, i);
      if (!row.ok()) return row.status();
      out.push_back(std::move(row->job));
    }
    return out;
  });
}

absl::StatusOr<std::map<v1::JobState, int64_t>> PostgresStore::CountJobsByState() {
  return Read([&](Connection& c) -> absl::StatusOr<std::map<v1::JobState, int64_t>> {
    absl::StatusOr<Rows> r = c.Query("SELECT state, COUNT(*) FROM jobs GROUP BY state");
    if (!r.ok()) return r.status();
    std::map<v1::JobState, int64_t> out;
    for (int i = 0; i < r->size(); ++i) out[static_cast<v1::JobState>(r->Int(i, 0))] = r->Int(i, 1);
    return out;
  });
}

absl::StatusOr<Transition> PostgresStore::CancelJob(absl::string_view job_id, int64_t now_ms) {
  return Transact([&](Connection& c) -> absl::StatusOr<Transition> {
    absl::StatusOr<JobRow> row = LoadJob(c, job_id, /*lock=*/true);
    if (!row.ok()) return row.status();
    const v1::JobState previous = row->job.state();
    if (previous == v1::SUCCEEDED || previous == v1::FAILED)
      return absl::FailedPreconditionError(
          absl::StrCat("job '", job_id, "' already ", api::JobStateName(previous), "; nothing to cancel"));
    if (previous != v1::CANCELLED_JOB) {
      // The lease, if any, is kept: the worker holding it hears of the cancellation and completes.
      absl::StatusOr<Rows> up = c.Query("UPDATE jobs SET state = $2, finished_ms = $3 WHERE job_id = $1",
                                        Params().Text(job_id).Int(v1::CANCELLED_JOB).Int(now_ms));
      if (!up.ok()) return up.status();
      row->job.set_state(v1::CANCELLED_JOB);
      row->job.set_finished_unix_ms(now_ms);
    }
    return Transition{std::move(row->job), previous};
  });
}

absl::StatusOr<std::optional<Lease>> PostgresStore::LeaseNextJob(absl::string_view worker_id,
                                                                 const JobMatcher& matcher, int64_t now_ms,
                                                                 int64_t ttl_ms, absl::string_view lease_id) {
  return Transact([&](Connection& c) -> absl::StatusOr<std::optional<Lease>> {
    // Oldest first, a page at a time, without locks: the matcher decides on the spec (which never
    // changes), then the candidate is claimed with SKIP LOCKED and the state checked again under the
    // lock (READ COMMITTED re-reads a row that another transaction changed meanwhile). A candidate
    // another replica is claiming right now is passed over, not waited for.
    std::string chosen;
    int64_t after_created = std::numeric_limits<int64_t>::min();
    int64_t after_seq = std::numeric_limits<int64_t>::min();
    while (chosen.empty()) {
      absl::StatusOr<Rows> page = c.Query(R"sql(
SELECT job_id, spec, created_ms, seq FROM jobs WHERE state = $1 AND (created_ms, seq) > ($2, $3)
ORDER BY created_ms, seq LIMIT $4)sql",
                                          Params().Int(v1::QUEUED).Int(after_created).Int(after_seq).Int(kLeasePage));
      if (!page.ok()) return page.status();
      for (int i = 0; i < page->size() && chosen.empty(); ++i) {
        after_created = page->Int(i, 2);
        after_seq = page->Int(i, 3);
        v1::JobSpec spec;
        if (absl::Status s = ParseBytes(page->Text(i, 1), &spec, "job spec"); !s.ok()) return s;
        if (!matcher(spec)) continue;
        absl::StatusOr<Rows> claim =
            c.Query("SELECT job_id FROM jobs WHERE job_id = $1 AND state = $2 FOR UPDATE SKIP LOCKED",
                    Params().Text(page->Text(i, 0)).Int(v1::QUEUED));
        if (!claim.ok()) return claim.status();
        if (claim->size() == 1) chosen = page->Text(i, 0);
      }
      if (page->size() < kLeasePage) break;
    }
    if (chosen.empty()) return std::optional<Lease>();
    const int64_t expires = now_ms + ttl_ms;
    absl::StatusOr<Rows> up = c.Query(absl::StrCat(R"sql(
UPDATE jobs SET state = $2, attempts = attempts + 1, worker_id = $3, lease_id = $4, lease_expires_ms = $5,
                started_ms = $6, finished_ms = 0, error = '', progress = NULL
WHERE job_id = $1 RETURNING )sql",
                                                   kJobColumns),
                                      Params()
                                          .Text(chosen)
                                          .Int(v1::RUNNING)
                                          .Text(worker_id)
                                          .Text(lease_id)
                                          .Int(expires)
                                          .Int(now_ms));
    if (!up.ok()) return up.status();
    absl::StatusOr<JobRow> row = ReadJob(*up, 0);
    if (!row.ok()) return row.status();
    if (absl::Status s = RefreshWorker(c, worker_id); !s.ok()) return s;
    return std::optional<Lease>(Lease{std::move(row->job), std::string(lease_id), expires});
  });
}

absl::StatusOr<Lease> PostgresStore::ExtendLease(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                                 const v1::Progress* progress) {
  return Transact([&](Connection& c) -> absl::StatusOr<Lease> {
    absl::StatusOr<JobRow> row = LoadLiveLease(c, lease_id, now_ms);
    if (!row.ok()) return row.status();
    if (absl::Status s = Extend(c, &*row, now_ms, ttl_ms, progress); !s.ok()) return s;
    return Lease{std::move(row->job), std::string(lease_id), row->lease_expires_ms};
  });
}

absl::StatusOr<v1::Job> PostgresStore::GetLeasedJob(absl::string_view lease_id, int64_t now_ms) {
  return Read([&](Connection& c) -> absl::StatusOr<v1::Job> {
    absl::StatusOr<JobRow> row = LoadLiveLease(c, lease_id, now_ms, /*lock=*/false);
    if (!row.ok()) return row.status();
    return std::move(row->job);
  });
}

absl::StatusOr<ReportOutcome> PostgresStore::AppendResults(absl::string_view lease_id, int64_t now_ms,
                                                           int64_t ttl_ms, const v1::Progress* progress,
                                                           const std::vector<v1::Result>& results,
                                                           const std::vector<ResultVerdict>& verdicts) {
  if (!verdicts.empty() && verdicts.size() != results.size())
    return absl::InvalidArgumentError(
        absl::StrCat("verdicts: ", verdicts.size(), " for ", results.size(), " results; give one per result or none"));
  return Transact([&](Connection& c) -> absl::StatusOr<ReportOutcome> {
    absl::StatusOr<JobRow> row = LoadLiveLease(c, lease_id, now_ms);
    if (!row.ok()) return row.status();
    if (absl::Status s = Extend(c, &*row, now_ms, ttl_ms, progress); !s.ok()) return s;
    const v1::Job& job = row->job;
    const std::string branch = LabelOf(job, "branch");
    const std::string git_sha = LabelOf(job, "git_sha");
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
      Params p;
      p.Text(job.job_id())
          .Int(job.attempts())
          .Int(r.index())
          .Text(r.op())
          .Text(r.variant())
          .Text(api::ProblemLabel(r.problem()))
          .Int(r.problem().dtype())
          .Int(r.status());
      if (r.has_timing()) p.Double(r.timing().median_ns());
      else p.NullDouble();
      p.Bytes(r.SerializeAsString()).Text(key.shape).Text(key.gpu_model).Text(branch).Text(git_sha).Int(finished_ms);
      if (utilization > 0) p.Double(utilization);
      else p.NullDouble();
      p.Bytes(samples.sorted)
          .Int(verdict.verdict)
          .Double(verdict.change_fraction)
          .Double(verdict.p_value)
          .Double(verdict.baseline_median_ns)
          .Bytes(samples.order);
      // xmax = 0 on the returned row: it was inserted, not updated.
      absl::StatusOr<Rows> ins = c.Query(R"sql(
INSERT INTO results (job_id, attempt, idx, op, variant, problem_label, dtype, status, median_ns, result, shape,
                     gpu_model, branch, git_sha, finished_ms, utilization, samples, verdict, change_fraction,
                     p_value, baseline_median_ns, samples_order)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
ON CONFLICT (job_id, attempt, idx) DO UPDATE SET
  op = EXCLUDED.op, variant = EXCLUDED.variant, problem_label = EXCLUDED.problem_label, dtype = EXCLUDED.dtype,
  status = EXCLUDED.status, median_ns = EXCLUDED.median_ns, result = EXCLUDED.result, shape = EXCLUDED.shape,
  gpu_model = EXCLUDED.gpu_model, branch = EXCLUDED.branch, git_sha = EXCLUDED.git_sha,
  finished_ms = EXCLUDED.finished_ms, utilization = EXCLUDED.utilization, samples = EXCLUDED.samples,
  verdict = EXCLUDED.verdict, change_fraction = EXCLUDED.change_fraction, p_value = EXCLUDED.p_value,
  baseline_median_ns = EXCLUDED.baseline_median_ns, samples_order = EXCLUDED.samples_order
RETURNING (xmax = 0))sql",
                                         p);
      if (!ins.ok()) return ins.status();
      if (verdict.tracked && r.status() == v1::OK) {
        Params sp;
        sp.Text(key.op)
            .Text(key.variant)
            .Text(key.shape)
            .Int(key.dtype)
            .Text(key.gpu_model)
            .Text(job.job_id())
            .Int(finished_ms)
            .Double(r.timing().median_ns());
        if (utilization > 0) sp.Double(utilization);
        else sp.NullDouble();
        sp.Int(verdict.verdict);
        absl::StatusOr<Rows> series = c.Query(R"sql(
INSERT INTO series (op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (op, variant, shape, dtype, gpu_model) DO UPDATE SET
  job_id = EXCLUDED.job_id, finished_ms = EXCLUDED.finished_ms, median_ns = EXCLUDED.median_ns,
  utilization = EXCLUDED.utilization, verdict = EXCLUDED.verdict
WHERE EXCLUDED.finished_ms >= series.finished_ms)sql",
                                              sp);
        if (!series.ok()) return series.status();
      }
      if (ins->size() == 1 && ins->Int(0, 0) != 0) added.push_back(r.index());
    }
    return ReportOutcome{Lease{std::move(row->job), std::string(lease_id), row->lease_expires_ms}, std::move(added)};
  });
}

absl::StatusOr<Transition> PostgresStore::CompleteJob(absl::string_view lease_id, int64_t now_ms, bool failed,
                                                      absl::string_view error) {
  return Transact([&](Connection& c) -> absl::StatusOr<Transition> {
    absl::StatusOr<JobRow> row = LoadLiveLease(c, lease_id, now_ms);
    if (!row.ok()) return row.status();
    const v1::JobState previous = row->job.state();
    const v1::JobState next = previous == v1::CANCELLED_JOB ? previous : (failed ? v1::FAILED : v1::SUCCEEDED);
    absl::StatusOr<Rows> up = c.Query(absl::StrCat(R"sql(
UPDATE jobs SET state = $2, lease_id = '', lease_expires_ms = 0, error = $3,
                finished_ms = CASE WHEN finished_ms = 0 THEN $4 ELSE finished_ms END
WHERE job_id = $1 RETURNING )sql",
                                                   kJobColumns),
                                      Params().Text(row->job.job_id()).Int(next).Text(failed ? error : "").Int(now_ms));
    if (!up.ok()) return up.status();
    absl::StatusOr<JobRow> after = ReadJob(*up, 0);
    if (!after.ok()) return after.status();
    if (absl::Status s = RefreshWorker(c, row->job.worker_id()); !s.ok()) return s;
    return Transition{std::move(after->job), previous};
  });
}

absl::StatusOr<std::vector<Transition>> PostgresStore::RequeueExpired(int64_t now_ms, int max_attempts) {
  return Transact([&](Connection& c) -> absl::StatusOr<std::vector<Transition>> {
    // Leases another replica is requeueing (or a worker is reporting on) right now are skipped.
    // `lease_id > ''` selects the same rows as != '' but, unlike it, can use jobs_by_lease: this runs
    // before every lease, and would otherwise read every job ever submitted.
    absl::StatusOr<Rows> r = c.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE lease_id > '' AND ",
                                                  "lease_expires_ms <= $1 ORDER BY created_ms, seq ",
                                                  "FOR UPDATE SKIP LOCKED"),
                                     Params().Int(now_ms));
    if (!r.ok()) return r.status();
    std::vector<Transition> out;
    std::set<std::string> workers;
    for (int i = 0; i < r->size(); ++i) {
      absl::StatusOr<JobRow> row = ReadJob(*r, i);
      if (!row.ok()) return row.status();
      const v1::Job& job = row->job;
      workers.insert(job.worker_id());
      if (job.state() == v1::RUNNING) {
        // The attempt's partial results go: the next attempt produces them again.
        absl::StatusOr<Rows> del = c.Query("DELETE FROM results WHERE job_id = $1 AND attempt = $2",
                                           Params().Text(job.job_id()).Int(job.attempts()));
        if (!del.ok()) return del.status();
      }
      Params p;
      p.Text(job.job_id());
      if (job.state() != v1::RUNNING) {
        // A cancelled job whose worker vanished: it stays cancelled, the lease is simply released.
        p.Int(job.state()).Text(job.error());
        if (job.has_progress()) p.Bytes(job.progress().SerializeAsString());
        else p.NullBytes();
        p.Int(0).Int(now_ms);
      } else if (job.attempts() < max_attempts) {
        p.Int(v1::QUEUED).Text("").NullBytes().Int(0).Int(now_ms);
      } else {
        p.Int(v1::FAILED)
            .Text(absl::StrCat("lease expired on worker '", job.worker_id(), "' (attempt ", job.attempts(), " of ",
                               max_attempts, "); retries exhausted"))
            .NullBytes()
            .Int(1)
            .Int(now_ms);
      }
      absl::StatusOr<Rows> up = c.Query(absl::StrCat(R"sql(
UPDATE jobs SET state = $2, lease_id = '', lease_expires_ms = 0, error = $3, progress = $4,
                finished_ms = CASE WHEN $5 = 1 THEN $6 ELSE finished_ms END
WHERE job_id = $1 RETURNING )sql",
                                                     kJobColumns),
                                        p);
      if (!up.ok()) return up.status();
      absl::StatusOr<JobRow> after = ReadJob(*up, 0);
      if (!after.ok()) return after.status();
      out.push_back(Transition{std::move(after->job), job.state()});
    }
    for (const std::string& w : workers)
      if (absl::Status s = RefreshWorker(c, w); !s.ok()) return s;
    return out;
  });
}

absl::StatusOr<std::vector<v1::Result>> PostgresStore::GetResults(absl::string_view job_id, bool include_samples) {
  return Transact([&](Connection& c) -> absl::StatusOr<std::vector<v1::Result>> {
    absl::StatusOr<JobRow> job = LoadJob(c, job_id, false);
    if (!job.ok()) return job.status();
    absl::StatusOr<Rows> r =
        c.Query(absl::StrCat("SELECT result, ", include_samples ? "samples, samples_order" : "NULL::bytea, NULL::bytea",
                             " FROM results WHERE job_id = $1 AND attempt = $2 ORDER BY idx"),
                                     Params().Text(job_id).Int(job->job.attempts()));
    if (!r.ok()) return r.status();
    std::vector<v1::Result> out;
    for (int i = 0; i < r->size(); ++i) {
      v1::Result res;
      if (absl::Status s = ParseBytes(r->Text(i, 0), &res, "result"); !s.ok()) return s;
      if (!include_samples) {
        res.mutable_timing()->clear_samples_ns();
      } else if (!r->IsNull(i, 1)) {
        for (double d : UnpackInOrder(r->Text(i, 1), r->Text(i, 2))) res.mutable_timing()->add_samples_ns(d);
      }
      out.push_back(std::move(res));
    }
    return out;
  });
}

absl::StatusOr<std::vector<BaselineResult>> PostgresStore::BaselineResults(const SeriesKey& series,
                                                                           absl::string_view branch, int limit,
                                                                           absl::string_view exclude_job_id,
                                                                           const HaveSamples& have_samples) {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<BaselineResult>> {
    // xmin (the writing transaction) is the revision: an ON CONFLICT update writes a new row version.
    absl::StatusOr<Rows> r = c.Query(R"sql(
SELECT job_id, median_ns, samples, attempt, idx, xmin::text::bigint FROM results
WHERE op = $1 AND variant = $2 AND shape = $3 AND dtype = $4 AND gpu_model = $5 AND branch = $6 AND status = $7
  AND job_id != $8
ORDER BY finished_ms DESC, seq DESC LIMIT $9)sql",
                                     Params()
                                         .Text(series.op)
                                         .Text(series.variant)
                                         .Text(series.shape)
                                         .Int(series.dtype)
                                         .Text(series.gpu_model)
                                         .Text(branch)
                                         .Int(v1::OK)
                                         .Text(exclude_job_id)
                                         .Int(limit));
    if (!r.ok()) return r.status();
    std::vector<BaselineResult> out;
    for (int i = 0; i < r->size(); ++i) {
      BaselineResult& b = out.emplace_back();
      b.job_id = r->Text(i, 0);
      b.attempt = static_cast<int32_t>(r->Int(i, 3));
      b.index = static_cast<int32_t>(r->Int(i, 4));
      b.revision = r->Int(i, 5);
      b.median_ns = r->Double(i, 1);
      b.samples_omitted = have_samples && have_samples(b);
      if (!b.samples_omitted) b.samples_ns = UnpackSorted(r->Text(i, 2));
    }
    return out;
  });
}

absl::StatusOr<std::vector<HistoryRow>> PostgresStore::History(const HistoryQuery& query) {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<HistoryRow>> {
    absl::StatusOr<Rows> r = c.Query(R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict, change_fraction,
       p_value, baseline_median_ns, branch, git_sha
FROM results
WHERE op = $1 AND status = $2 AND ($3 = '' OR variant = $3) AND ($4 = '' OR strpos(lower(gpu_model), lower($4)) > 0)
  AND ($5 = '' OR shape = $5) AND ($6 = 0 OR dtype = $6)
ORDER BY finished_ms DESC, seq DESC LIMIT $7)sql",
                                     Params()
                                         .Text(query.op)
                                         .Int(v1::OK)
                                         .Text(query.variant)
                                         .Text(query.gpu_model_substring)
                                         .Text(query.shape)
                                         .Int(query.dtype)
                                         .Int(query.limit));
    if (!r.ok()) return r.status();
    std::vector<HistoryRow> out;
    for (int i = 0; i < r->size(); ++i) {
      HistoryRow h;
      h.series = SeriesKey{r->Text(i, 0), r->Text(i, 1), r->Text(i, 2), static_cast<v1::Dtype>(r->Int(i, 3)),
                           r->Text(i, 4)};
      h.job_id = r->Text(i, 5);
      h.finished_unix_ms = r->Int(i, 6);
      h.median_ns = r->Double(i, 7);
      h.utilization = r->Double(i, 8);
      h.verdict.verdict = static_cast<v1::Verdict>(r->Int(i, 9));
      h.verdict.change_fraction = r->Double(i, 10);
      h.verdict.p_value = r->Double(i, 11);
      h.verdict.baseline_median_ns = r->Double(i, 12);
      h.branch = r->Text(i, 13);
      h.git_sha = r->Text(i, 14);
      out.push_back(std::move(h));
    }
    return out;
  });
}

absl::StatusOr<std::vector<SeriesPoint>> PostgresStore::ListSeries() {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<SeriesPoint>> {
    absl::StatusOr<Rows> r = c.Query(R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict FROM series
ORDER BY op, variant, shape, dtype, gpu_model)sql");
    if (!r.ok()) return r.status();
    std::vector<SeriesPoint> out;
    for (int i = 0; i < r->size(); ++i) {
      SeriesPoint p;
      p.series = SeriesKey{r->Text(i, 0), r->Text(i, 1), r->Text(i, 2), static_cast<v1::Dtype>(r->Int(i, 3)),
                           r->Text(i, 4)};
      p.job_id = r->Text(i, 5);
      p.finished_unix_ms = r->Int(i, 6);
      p.median_ns = r->Double(i, 7);
      p.utilization = r->Double(i, 8);
      p.verdict = static_cast<v1::Verdict>(r->Int(i, 9));
      out.push_back(std::move(p));
    }
    return out;
  });
}

absl::Status PostgresStore::UpsertWorker(const v1::WorkerInfo& info, int64_t now_ms) {
  if (info.worker_id().empty()) return absl::InvalidArgumentError("worker info has no worker_id");
  return Transact([&](Connection& c) -> absl::Status {
    absl::StatusOr<Rows> up = c.Query(R"sql(
INSERT INTO workers (worker_id, info, last_heartbeat_ms) VALUES ($1, $2, $3)
ON CONFLICT (worker_id) DO UPDATE SET info = EXCLUDED.info, last_heartbeat_ms = EXCLUDED.last_heartbeat_ms)sql",
                                      Params().Text(info.worker_id()).Bytes(info.SerializeAsString()).Int(now_ms));
    if (!up.ok()) return up.status();
    return RefreshWorker(c, info.worker_id());
  });
}

absl::StatusOr<std::vector<std::string>> PostgresStore::Heartbeat(absl::string_view worker_id, int64_t now_ms) {
  return Transact([&](Connection& c) -> absl::StatusOr<std::vector<std::string>> {
    absl::StatusOr<Rows> up = c.Query("UPDATE workers SET last_heartbeat_ms = $2 WHERE worker_id = $1",
                                      Params().Text(worker_id).Int(now_ms));
    if (!up.ok()) return up.status();
    if (up->Affected() == 0) return WorkerNotFound(worker_id);
    absl::StatusOr<Rows> r = c.Query(
        "SELECT job_id FROM jobs WHERE worker_id = $1 AND lease_id > '' AND state = $2 ORDER BY created_ms, seq",
        Params().Text(worker_id).Int(v1::CANCELLED_JOB));
    if (!r.ok()) return r.status();
    std::vector<std::string> cancelled;
    for (int i = 0; i < r->size(); ++i) cancelled.push_back(r->Text(i, 0));
    return cancelled;
  });
}

absl::StatusOr<WorkerRecord> PostgresStore::GetWorker(absl::string_view worker_id) {
  return Read([&](Connection& c) -> absl::StatusOr<WorkerRecord> {
    absl::StatusOr<Rows> r =
        c.Query(absl::StrCat("SELECT ", kWorkerColumns, " FROM workers WHERE worker_id = $1"),
                Params().Text(worker_id));
    if (!r.ok()) return r.status();
    if (r->size() == 0) return WorkerNotFound(worker_id);
    return ReadWorker(*r, 0);
  });
}

absl::StatusOr<std::vector<WorkerRecord>> PostgresStore::ListWorkers() {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<WorkerRecord>> {
    absl::StatusOr<Rows> r = c.Query(absl::StrCat("SELECT ", kWorkerColumns, " FROM workers ORDER BY seq"));
    if (!r.ok()) return r.status();
    std::vector<WorkerRecord> out;
    for (int i = 0; i < r->size(); ++i) {
      absl::StatusOr<WorkerRecord> w = ReadWorker(*r, i);
      if (!w.ok()) return w.status();
      out.push_back(*std::move(w));
    }
    return out;
  });
}

}  // namespace kbench::server
