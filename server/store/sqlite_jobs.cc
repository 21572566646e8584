// SqliteJobTables: the lifecycle's statements in SQLite's SQL; see sqlite_jobs.h.
#include "server/store/sqlite_jobs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "server/store/job_lifecycle.h"

namespace kbench::server::sqlite {

absl::StatusOr<JobRow> ReadJobRow(const Statement& q) {
  struct Columns {
    const Statement& q;
    std::string Text(int i) const { return q.Text(i); }
    int64_t Int(int i) const { return q.Int(i); }
    std::string Bytes(int i) const { return q.Blob(i); }
    bool IsNull(int i) const { return q.IsNull(i); }
  };
  return ReadJobColumns(Columns{q});
}

absl::StatusOr<JobRow> SqliteJobTables::LoadJob(absl::string_view job_id, bool /*lock*/) {
  Statement q(statements_, absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE job_id = ?1"));
  q.BindText(1, job_id);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return lifecycle::JobNotFound(job_id);
  return ReadJobRow(q);
}

absl::StatusOr<std::optional<JobRow>> SqliteJobTables::FindByLease(absl::string_view lease_id, bool /*lock*/) {
  Statement q(statements_, absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE lease_id = ?1"));
  q.BindText(1, lease_id);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<JobRow>();
  absl::StatusOr<JobRow> out = ReadJobRow(q);
  if (!out.ok()) return out.status();
  return std::optional<JobRow>(*std::move(out));
}

absl::Status SqliteJobTables::SetCancelled(absl::string_view job_id, v1::JobState state, int64_t finished_ms) {
  Statement q(statements_, "UPDATE jobs SET state = ?2, finished_ms = ?3 WHERE job_id = ?1");
  q.BindText(1, job_id).Bind(2, int64_t{state}).Bind(3, finished_ms);
  return q.Run();
}

absl::StatusOr<std::optional<v1::Job>> SqliteJobTables::StartAttempt(const std::vector<std::string>& candidates,
                                                                     v1::JobState from, v1::JobState to,
                                                                     absl::string_view worker_id,
                                                                     absl::string_view lease_id, int64_t expires_ms,
                                                                     int64_t now_ms) {
  // One writer at a time: nothing else claims a candidate while this transaction runs, so the first
  // one still in `from` is taken.
  for (const std::string& job_id : candidates) {
    std::optional<JobRow> started;
    {
      Statement up(statements_, absl::StrCat(R"sql(
UPDATE jobs SET state = ?2, attempts = attempts + 1, worker_id = ?3, lease_id = ?4, lease_expires_ms = ?5,
                started_ms = ?6, finished_ms = 0, error = '', progress = NULL
WHERE job_id = ?1 AND state = ?7 RETURNING )sql",
                                             kJobColumns));
      up.BindText(1, job_id).Bind(2, int64_t{to}).BindText(3, worker_id).BindText(4, lease_id).Bind(5, expires_ms);
      up.Bind(6, now_ms).Bind(7, int64_t{from});
      absl::StatusOr<bool> row = up.Step();
      if (!row.ok()) return row.status();
      if (!*row) continue;
      absl::StatusOr<JobRow> read = ReadJobRow(up);
      if (!read.ok()) return read.status();
      started = *std::move(read);
      if (absl::StatusOr<bool> done = up.Step(); !done.ok()) return done.status();
    }
    if (absl::Status s = RefreshWorker(worker_id); !s.ok()) return s;
    return std::optional<v1::Job>(std::move(started->job));
  }
  return std::optional<v1::Job>();
}

absl::Status SqliteJobTables::SetLeaseExpiry(absl::string_view job_id, int64_t expires_ms,
                                             const v1::Progress* progress) {
  Statement up(statements_, progress != nullptr
                                ? "UPDATE jobs SET lease_expires_ms = ?2, progress = ?3 WHERE job_id = ?1"
                                : "UPDATE jobs SET lease_expires_ms = ?2 WHERE job_id = ?1");
  up.BindText(1, job_id).Bind(2, expires_ms);
  if (progress != nullptr) up.BindBlob(3, progress->SerializeAsString());
  return up.Run();
}

absl::StatusOr<v1::Job> SqliteJobTables::EndAttempt(absl::string_view job_id, v1::JobState state,
                                                    absl::string_view error, int64_t now_ms) {
  Statement up(statements_, R"sql(
UPDATE jobs SET state = ?2, lease_id = '', lease_expires_ms = 0, error = ?3,
                finished_ms = CASE WHEN finished_ms = 0 THEN ?4 ELSE finished_ms END
WHERE job_id = ?1)sql");
  up.BindText(1, job_id).Bind(2, int64_t{state}).BindText(3, error).Bind(4, now_ms);
  if (absl::Status s = up.Run(); !s.ok()) return s;
  absl::StatusOr<JobRow> row = LoadJob(job_id, false);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<std::vector<JobRow>> SqliteJobTables::ExpiredLeases(int64_t now_ms) {
  // Runs before every lease: `lease_id > ''` (the same rows as != '') and the unary + on the sort key
  // make SQLite search jobs_by_lease for the few leased jobs instead of scanning every job ever
  // submitted in created order.
  Statement q(statements_, absl::StrCat("SELECT ", kJobColumns,
                                        " FROM jobs WHERE lease_id > '' AND lease_expires_ms <= ?1 ",
                                        "ORDER BY +created_ms, rowid"));
  q.Bind(1, now_ms);
  std::vector<JobRow> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<JobRow> r = ReadJobRow(q);
    if (!r.ok()) return r.status();
    out.push_back(*std::move(r));
  }
  return out;
}

absl::StatusOr<v1::Job> SqliteJobTables::ReleaseLease(absl::string_view job_id, const LeaseRelease& release,
                                                      int64_t now_ms) {
  Statement up(statements_, R"sql(
UPDATE jobs SET state = ?2, lease_id = '', lease_expires_ms = 0, error = ?3, progress = ?4,
                finished_ms = CASE WHEN ?5 THEN ?6 ELSE finished_ms END
WHERE job_id = ?1)sql");
  up.BindText(1, job_id).Bind(2, int64_t{release.state}).BindText(3, release.error);
  if (release.progress) up.BindBlob(4, release.progress->SerializeAsString());
  else up.BindNull(4);
  up.Bind(5, int64_t{release.set_finished ? 1 : 0}).Bind(6, now_ms);
  if (absl::Status s = up.Run(); !s.ok()) return s;
  absl::StatusOr<JobRow> row = LoadJob(job_id, false);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::Status SqliteJobTables::DeleteAttemptResults(absl::string_view job_id, int32_t attempt) {
  stored_.reset();  // Its indexes may be among those deleted.
  Statement del(statements_, "DELETE FROM results WHERE job_id = ?1 AND attempt = ?2");
  del.BindText(1, job_id).Bind(2, int64_t{attempt});
  return del.Run();
}

absl::StatusOr<bool> SqliteJobTables::PutResult(const StoredResult& s) {
  const v1::Result& r = s.result;
  if (!stored_ || stored_->job_id != r.job_id() || stored_->attempt != r.attempt()) {
    stored_ = StoredIndexes{r.job_id(), r.attempt(), {}};
    Statement q(statements_, "SELECT idx FROM results WHERE job_id = ?1 AND attempt = ?2");
    q.BindText(1, r.job_id()).Bind(2, int64_t{r.attempt()});
    while (true) {
      absl::StatusOr<bool> more = q.Step();
      if (!more.ok()) {
        stored_.reset();
        return more.status();
      }
      if (!*more) break;
      stored_->indexes.insert(q.Int(0));
    }
  }
  const bool is_new = stored_->indexes.insert(r.index()).second;
  Statement ins(statements_, R"sql(
INSERT OR REPLACE INTO results (job_id, attempt, idx, op, variant, problem_label, dtype, status, median_ns, result,
                                shape, gpu_model, branch, git_sha, finished_ms, utilization, samples, verdict,
                                change_fraction, p_value, baseline_median_ns, samples_order, cache_mode, hot_batch,
                                backend)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24,
        ?25))sql");
  ins.BindText(1, r.job_id())
      .Bind(2, int64_t{r.attempt()})
      .Bind(3, int64_t{r.index()})
      .BindText(4, r.op())
      .BindText(5, r.variant())
      .BindText(6, api::ProblemLabel(r.problem()))
      .Bind(7, int64_t{r.problem().dtype()})
      .Bind(8, int64_t{r.status()});
  if (r.has_timing()) ins.Bind(9, r.timing().median_ns());
  ins.BindBlob(10, r.SerializeAsString())
      .BindText(11, s.series.shape)
      .BindText(12, s.series.gpu_model)
      .BindText(13, s.branch)
      .BindText(14, s.git_sha)
      .Bind(15, s.finished_ms);
  if (s.utilization > 0) ins.Bind(16, s.utilization);
  ins.BindBlob(17, s.samples.sorted)
      .Bind(18, int64_t{s.verdict.verdict})
      .Bind(19, s.verdict.change_fraction)
      .Bind(20, s.verdict.p_value)
      .Bind(21, s.verdict.baseline_median_ns)
      .BindBlob(22, s.samples.order)
      .Bind(23, int64_t{s.series.cache_mode})
      .Bind(24, int64_t{s.series.hot_batch})
      .Bind(25, int64_t{s.series.backend});
  if (absl::Status st = ins.Run(); !st.ok()) return st;
  return is_new;
}

absl::Status SqliteJobTables::UpsertSeriesPoint(const StoredResult& s) {
  Statement series(statements_, R"sql(
INSERT INTO series (op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict,
                    cache_mode, hot_batch, backend)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
ON CONFLICT (op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend) DO UPDATE SET
  job_id = excluded.job_id, finished_ms = excluded.finished_ms, median_ns = excluded.median_ns,
  utilization = excluded.utilization, verdict = excluded.verdict
WHERE excluded.finished_ms >= series.finished_ms)sql");
  series.BindText(1, s.series.op)
      .BindText(2, s.series.variant)
      .BindText(3, s.series.shape)
      .Bind(4, int64_t{s.series.dtype})
      .BindText(5, s.series.gpu_model)
      .BindText(6, s.result.job_id())
      .Bind(7, s.finished_ms)
      .Bind(8, s.result.timing().median_ns());
  if (s.utilization > 0) series.Bind(9, s.utilization);
  series.Bind(10, int64_t{s.verdict.verdict})
      .Bind(11, int64_t{s.series.cache_mode})
      .Bind(12, int64_t{s.series.hot_batch})
      .Bind(13, int64_t{s.series.backend});
  return series.Run();
}

absl::Status SqliteJobTables::RefreshWorker(absl::string_view worker_id) {
  if (worker_id.empty()) return absl::OkStatus();
  Statement q(statements_, R"sql(
UPDATE workers SET
  current_job_id = COALESCE((SELECT job_id FROM jobs WHERE worker_id = ?1 AND lease_id > ''
                             ORDER BY started_ms DESC, rowid DESC LIMIT 1), ''),
  state = CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE worker_id = ?1 AND lease_id > '') THEN 'busy' ELSE 'idle' END
WHERE worker_id = ?1)sql");
  q.BindText(1, worker_id);
  return q.Run();
}

}  // namespace kbench::server::sqlite
