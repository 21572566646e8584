// PgJobTables: the lifecycle's statements in PostgreSQL's SQL; see pg_jobs.h.
#include "server/store/pg_jobs.h"

#include <utility>

#include "api/names.h"
#include "server/store/job_lifecycle.h"

namespace kbench::server::pg {
namespace {

// The one row an UPDATE ... RETURNING kJobColumns wrote.
absl::StatusOr<v1::Job> Returned(const absl::StatusOr<Rows>& r) {
  if (!r.ok()) return r.status();
  absl::StatusOr<JobRow> row = ReadJobRow(*r, 0);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

}  // namespace

absl::StatusOr<JobRow> ReadJobRow(const Rows& r, int row) {
  struct Columns {
    const Rows& r;
    int row;
    std::string Text(int i) const { return r.Text(row, i); }
    int64_t Int(int i) const { return r.Int(row, i); }
    std::string Bytes(int i) const { return r.Text(row, i); }  // Text gives bytea as its raw bytes.
    bool IsNull(int i) const { return r.IsNull(row, i); }
  };
  return ReadJobColumns(Columns{r, row});
}

const std::string& QueuePageSql() {
  // The state is a literal, not a parameter: the plan PostgreSQL caches for a prepared statement
  // (after a few executions, a generic one) then still knows which state and walks jobs_by_state
  // from the queue's head. With `state = $1` its generic plan could walk jobs_by_created and filter,
  // reading every job ever submitted on each poll (milliseconds, growing with the table); whether a
  // connection got that plan varied from run to run.
  static const std::string* const sql = new std::string(absl::StrCat(
      "SELECT job_id, spec, created_ms, seq FROM jobs WHERE state = ", static_cast<int>(v1::QUEUED),
      " AND (created_ms, seq) > ($1, $2) ORDER BY created_ms, seq LIMIT $3"));
  return *sql;
}

absl::StatusOr<JobRow> PgJobTables::LoadJob(absl::string_view job_id, bool lock) {
  absl::StatusOr<Rows> r = c_.Query(
      absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE job_id = $1", lock ? " FOR UPDATE" : ""),
      Params().Text(job_id));
  if (!r.ok()) return r.status();
  if (r->size() == 0) return lifecycle::JobNotFound(job_id);
  return ReadJobRow(*r, 0);
}

absl::StatusOr<std::optional<JobRow>> PgJobTables::FindByLease(absl::string_view lease_id, bool lock) {
  absl::StatusOr<Rows> r = c_.Query(
      absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE lease_id = $1", lock ? " FOR UPDATE" : ""),
      Params().Text(lease_id));
  if (!r.ok()) return r.status();
  if (r->size() == 0) return std::optional<JobRow>();
  absl::StatusOr<JobRow> row = ReadJobRow(*r, 0);
  if (!row.ok()) return row.status();
  return std::optional<JobRow>(*std::move(row));
}

absl::Status PgJobTables::SetCancelled(absl::string_view job_id, v1::JobState state, int64_t finished_ms) {
  return c_.Query("UPDATE jobs SET state = $2, finished_ms = $3 WHERE job_id = $1",
                  Params().Text(job_id).Int(state).Int(finished_ms))
      .status();
}

absl::StatusOr<std::optional<v1::Job>> PgJobTables::StartAttempt(const std::vector<std::string>& candidates,
                                                                 v1::JobState from, v1::JobState to,
                                                                 absl::string_view worker_id,
                                                                 absl::string_view lease_id, int64_t expires_ms,
                                                                 int64_t now_ms) {
  if (candidates.empty()) return std::optional<v1::Job>();
  // One statement, one round trip: the claim, the attempt and the worker's row. `pick` locks the
  // first candidate (they come oldest first) still in `from`, looked up by primary key in the order
  // given whatever plan is cached, passing over rows another transaction holds (SKIP LOCKED) and,
  // under READ COMMITTED, re-checking a row that a committed transaction changed since the snapshot
  // (its state is read again once locked). The worker's row is RefreshWorker's, written in the same
  // statement: a CTE does not see the rows its siblings update, so the started row is counted from
  // `started`, and the worker's other leases from the snapshot.
  absl::StatusOr<Rows> r = c_.Query(absl::StrCat(R"sql(
WITH pick AS (
  SELECT jobs.job_id AS picked FROM unnest($1::text[]) WITH ORDINALITY AS c(id, n) JOIN jobs ON jobs.job_id = c.id
  WHERE jobs.state = $2 ORDER BY c.n LIMIT 1 FOR UPDATE OF jobs SKIP LOCKED),
started AS (
  UPDATE jobs SET state = $3, attempts = attempts + 1, worker_id = $4, lease_id = $5, lease_expires_ms = $6,
                  started_ms = $7, finished_ms = 0, error = '', progress = NULL
  FROM pick WHERE jobs.job_id = pick.picked
  RETURNING )sql",
                                                 kJobColumns, R"sql(, seq),
worker AS (
  UPDATE workers SET
    current_job_id = (SELECT held.job_id FROM (
        SELECT job_id, started_ms, seq FROM jobs WHERE worker_id = $4 AND lease_id > '' AND job_id <> s.job_id
        UNION ALL SELECT s.job_id, s.started_ms, s.seq) held
      ORDER BY held.started_ms DESC, held.seq DESC LIMIT 1),
    state = 'busy'
  FROM started s WHERE workers.worker_id = $4)
SELECT )sql",
                                                 kJobColumns, " FROM started"),
                                    Params()
                                        .TextArray(candidates)
                                        .Int(from)
                                        .Int(to)
                                        .Text(worker_id)
                                        .Text(lease_id)
                                        .Int(expires_ms)
                                        .Int(now_ms));
  if (!r.ok()) return r.status();
  if (r->size() == 0) return std::optional<v1::Job>();
  absl::StatusOr<JobRow> row = ReadJobRow(*r, 0);
  if (!row.ok()) return row.status();
  return std::optional<v1::Job>(std::move(row->job));
}

absl::StatusOr<std::optional<JobRow>> PgJobTables::ExtendLiveLease(absl::string_view lease_id, int64_t now_ms,
                                                                   int64_t expires_ms, const v1::Progress* progress) {
  // The WHERE is re-checked on the row a concurrent release left (READ COMMITTED): a lease the
  // reaper took meanwhile matches nothing.
  Params p;
  p.Text(lease_id).Int(now_ms).Int(expires_ms);
  if (progress != nullptr) p.Bytes(progress->SerializeAsString());
  absl::StatusOr<Rows> r =
      c_.Query(absl::StrCat("UPDATE jobs SET lease_expires_ms = $3", progress != nullptr ? ", progress = $4" : "",
                            " WHERE lease_id = $1 AND lease_expires_ms > $2 RETURNING ", kJobColumns),
               p);
  if (!r.ok()) return r.status();
  if (r->size() == 0) return std::optional<JobRow>();
  absl::StatusOr<JobRow> row = ReadJobRow(*r, 0);
  if (!row.ok()) return row.status();
  return std::optional<JobRow>(*std::move(row));
}

absl::Status PgJobTables::SetLeaseExpiry(absl::string_view job_id, int64_t expires_ms, const v1::Progress* progress) {
  if (progress != nullptr)
    return c_.Query("UPDATE jobs SET lease_expires_ms = $2, progress = $3 WHERE job_id = $1",
                    Params().Text(job_id).Int(expires_ms).Bytes(progress->SerializeAsString()))
        .status();
  return c_.Query("UPDATE jobs SET lease_expires_ms = $2 WHERE job_id = $1", Params().Text(job_id).Int(expires_ms))
      .status();
}

absl::StatusOr<v1::Job> PgJobTables::EndAttempt(absl::string_view job_id, v1::JobState state, absl::string_view error,
                                                int64_t now_ms) {
  return Returned(c_.Query(absl::StrCat(R"sql(
UPDATE jobs SET state = $2, lease_id = '', lease_expires_ms = 0, error = $3,
                finished_ms = CASE WHEN finished_ms = 0 THEN $4 ELSE finished_ms END
WHERE job_id = $1 RETURNING )sql",
                                        kJobColumns),
                           Params().Text(job_id).Int(state).Text(error).Int(now_ms)));
}

absl::StatusOr<std::vector<JobRow>> PgJobTables::ExpiredLeases(int64_t now_ms) {
  // Leases another replica is requeueing (or a worker is reporting on) right now are skipped.
  // `lease_id > ''` selects the same rows as != '' but, unlike it, can use jobs_by_lease: this runs
  // before every lease, and would otherwise read every job ever submitted.
  absl::StatusOr<Rows> r = c_.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE lease_id > '' AND ",
                                                 "lease_expires_ms <= $1 ORDER BY created_ms, seq ",
                                                 "FOR UPDATE SKIP LOCKED"),
                                    Params().Int(now_ms));
  if (!r.ok()) return r.status();
  std::vector<JobRow> out;
  for (int i = 0; i < r->size(); ++i) {
    absl::StatusOr<JobRow> row = ReadJobRow(*r, i);
    if (!row.ok()) return row.status();
    out.push_back(*std::move(row));
  }
  return out;
}

absl::StatusOr<v1::Job> PgJobTables::ReleaseLease(absl::string_view job_id, const LeaseRelease& release,
                                                  int64_t now_ms) {
  Params p;
  p.Text(job_id).Int(release.state).Text(release.error);
  if (release.progress) p.Bytes(release.progress->SerializeAsString());
  else p.NullBytes();
  p.Int(release.set_finished ? 1 : 0).Int(now_ms);
  return Returned(c_.Query(absl::StrCat(R"sql(
UPDATE jobs SET state = $2, lease_id = '', lease_expires_ms = 0, error = $3, progress = $4,
                finished_ms = CASE WHEN $5 = 1 THEN $6 ELSE finished_ms END
WHERE job_id = $1 RETURNING )sql",
                                        kJobColumns),
                           p));
}

absl::Status PgJobTables::DeleteAttemptResults(absl::string_view job_id, int32_t attempt) {
  return c_.Query("DELETE FROM results WHERE job_id = $1 AND attempt = $2", Params().Text(job_id).Int(attempt))
      .status();
}

absl::StatusOr<bool> PgJobTables::PutResult(const StoredResult& s) {
  const v1::Result& r = s.result;
  Params p;
  p.Text(r.job_id())
      .Int(r.attempt())
      .Int(r.index())
      .Text(r.op())
      .Text(r.variant())
      .Text(api::ProblemLabel(r.problem()))
      .Int(r.problem().dtype())
      .Int(r.status());
  if (r.has_timing()) p.Double(r.timing().median_ns());
  else p.NullDouble();
  p.Bytes(r.SerializeAsString())
      .Text(s.series.shape)
      .Text(s.series.gpu_model)
      .Text(s.branch)
      .Text(s.git_sha)
      .Int(s.finished_ms);
  if (s.utilization > 0) p.Double(s.utilization);
  else p.NullDouble();
  p.Bytes(s.samples.sorted)
      .Int(s.verdict.verdict)
      .Double(s.verdict.change_fraction)
      .Double(s.verdict.p_value)
      .Double(s.verdict.baseline_median_ns)
      .Bytes(s.samples.order)
      .Int(s.series.cache_mode)
      .Int(s.series.hot_batch)
      .Int(s.series.backend);
  // xmax = 0 on the returned row: it was inserted, not updated.
  absl::StatusOr<Rows> ins = c_.Query(R"sql(
INSERT INTO results (job_id, attempt, idx, op, variant, problem_label, dtype, status, median_ns, result, shape,
                     gpu_model, branch, git_sha, finished_ms, utilization, samples, verdict, change_fraction,
                     p_value, baseline_median_ns, samples_order, cache_mode, hot_batch, backend)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
        $24, $25)
ON CONFLICT (job_id, attempt, idx) DO UPDATE SET
  op = EXCLUDED.op, variant = EXCLUDED.variant, problem_label = EXCLUDED.problem_label, dtype = EXCLUDED.dtype,
  status = EXCLUDED.status, median_ns = EXCLUDED.median_ns, result = EXCLUDED.result, shape = EXCLUDED.shape,
  gpu_model = EXCLUDED.gpu_model, branch = EXCLUDED.branch, git_sha = EXCLUDED.git_sha,
  finished_ms = EXCLUDED.finished_ms, utilization = EXCLUDED.utilization, samples = EXCLUDED.samples,
  verdict = EXCLUDED.verdict, change_fraction = EXCLUDED.change_fraction, p_value = EXCLUDED.p_value,
  baseline_median_ns = EXCLUDED.baseline_median_ns, samples_order = EXCLUDED.samples_order,
  cache_mode = EXCLUDED.cache_mode, hot_batch = EXCLUDED.hot_batch, backend = EXCLUDED.backend
RETURNING (xmax = 0))sql",
                                      p);
  if (!ins.ok()) return ins.status();
  return ins->size() == 1 && ins->Int(0, 0) != 0;
}

absl::Status PgJobTables::UpsertSeriesPoint(const StoredResult& s) {
  Params p;
  p.Text(s.series.op)
      .Text(s.series.variant)
      .Text(s.series.shape)
      .Int(s.series.dtype)
      .Text(s.series.gpu_model)
      .Text(s.result.job_id())
      .Int(s.finished_ms)
      .Double(s.result.timing().median_ns());
  if (s.utilization > 0) p.Double(s.utilization);
  else p.NullDouble();
  p.Int(s.verdict.verdict).Int(s.series.cache_mode).Int(s.series.hot_batch).Int(s.series.backend);
  return c_.Query(R"sql(
INSERT INTO series (op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict,
                    cache_mode, hot_batch, backend)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend) DO UPDATE SET
  job_id = EXCLUDED.job_id, finished_ms = EXCLUDED.finished_ms, median_ns = EXCLUDED.median_ns,
  utilization = EXCLUDED.utilization, verdict = EXCLUDED.verdict
WHERE EXCLUDED.finished_ms >= series.finished_ms)sql",
                  p)
      .status();
}

absl::Status PgJobTables::RefreshWorker(absl::string_view worker_id) {
  if (worker_id.empty()) return absl::OkStatus();
  return c_.Query(R"sql(
UPDATE workers SET
  current_job_id = COALESCE((SELECT job_id FROM jobs WHERE worker_id = $1 AND lease_id > ''
                             ORDER BY started_ms DESC, seq DESC LIMIT 1), ''),
  state = CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE worker_id = $1 AND lease_id > '') THEN 'busy' ELSE 'idle' END
WHERE worker_id = $1)sql",
                  Params().Text(worker_id))
      .status();
}

}  // namespace kbench::server::pg
