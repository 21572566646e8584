// SqliteStore's reads of the performance history: a series' baseline and pinned reference, history
// rows, the series' latest points. Split from sqlite_store.cc to keep each file about one thing.
#include "absl/strings/str_cat.h"
#include "server/store/result_columns.h"
#include "server/store/sqlite_store.h"
#include "server/store/sqlite_util.h"

namespace kbench::server {

using sqlite::Statement;

namespace {

// A series' OK results on a branch: newest first (the baseline) or oldest first (the pinned
// reference). `samples`: whether to read the samples column at all (the reference never does), and
// which rows the caller already holds (their blobs are not copied out).
absl::StatusOr<std::vector<BaselineResult>> SeriesResults(sqlite::StatementCache* statements, const SeriesKey& series,
                                                          absl::string_view branch, int limit,
                                                          absl::string_view exclude_job_id, int64_t after_ms,
                                                          bool newest_first, bool samples,
                                                          const HaveSamples& have_samples) {
  // The rowid is the revision: INSERT OR REPLACE gives the new row a rowid above every existing one.
  const char* order = newest_first ? "DESC" : "ASC";
  Statement q(statements, absl::StrCat(R"sql(
SELECT job_id, median_ns, samples, attempt, idx, rowid FROM results
WHERE op = ?1 AND variant = ?2 AND shape = ?3 AND dtype = ?4 AND gpu_model = ?5 AND branch = ?6 AND status = ?7
  AND job_id != ?8 AND cache_mode = ?10 AND hot_batch = ?11 AND backend = ?12 AND (?13 = 0 OR finished_ms > ?13)
ORDER BY finished_ms )sql",
                                       order, ", rowid ", order, " LIMIT ?9"));
  q.BindText(1, series.op)
      .BindText(2, series.variant)
      .BindText(3, series.shape)
      .Bind(4, int64_t{series.dtype})
      .BindText(5, series.gpu_model)
      .BindText(6, branch)
      .Bind(7, int64_t{v1::OK})
      .BindText(8, exclude_job_id)
      .Bind(9, int64_t{limit})
      .Bind(10, int64_t{series.cache_mode})
      .Bind(11, int64_t{series.hot_batch})
      .Bind(12, int64_t{series.backend})
      .Bind(13, after_ms);
  std::vector<BaselineResult> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    BaselineResult& b = out.emplace_back();
    b.job_id = q.Text(0);
    b.median_ns = q.Double(1);
    b.attempt = static_cast<int32_t>(q.Int(3));
    b.index = static_cast<int32_t>(q.Int(4));
    b.revision = q.Int(5);
    // SQLite reads a column only when asked: a sample blob not wanted is never copied out.
    b.samples_omitted = !samples || (have_samples && have_samples(b));
    if (!b.samples_omitted) b.samples_ns = UnpackSorted(q.BlobView(2));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<BaselineResult>> SqliteStore::BaselineResults(const SeriesKey& series,
                                                                         absl::string_view branch, int limit,
                                                                         absl::string_view exclude_job_id,
                                                                         const HaveSamples& have_samples,
                                                                         int64_t after_ms) {
  absl::MutexLock lock(&mu_);
  return SeriesResults(statements_.get(), series, branch, limit, exclude_job_id, after_ms, /*newest_first=*/true,
                       /*samples=*/true, have_samples);
}

absl::StatusOr<std::vector<BaselineResult>> SqliteStore::ReferenceResults(const SeriesKey& series,
                                                                          absl::string_view branch, int limit,
                                                                          absl::string_view exclude_job_id,
                                                                          int64_t after_ms) {
  absl::MutexLock lock(&mu_);
  return SeriesResults(statements_.get(), series, branch, limit, exclude_job_id, after_ms, /*newest_first=*/false,
                       /*samples=*/false, nullptr);
}

absl::StatusOr<std::vector<HistoryRow>> SqliteStore::History(const HistoryQuery& query) {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict, change_fraction,
       p_value, baseline_median_ns, branch, git_sha, cache_mode, hot_batch, backend
FROM results
WHERE op = ?1 AND status = ?2 AND (?3 = '' OR variant = ?3) AND (?4 = '' OR instr(lower(gpu_model), lower(?4)) > 0)
  AND (?5 = '' OR shape = ?5) AND (?6 = 0 OR dtype = ?6) AND (?8 = 0 OR cache_mode = ?8)
  AND (?9 = 0 OR hot_batch = ?9) AND (?10 = 0 OR backend = ?10)
ORDER BY finished_ms DESC, rowid DESC LIMIT ?7)sql");
  q.BindText(1, query.op)
      .Bind(2, int64_t{v1::OK})
      .BindText(3, query.variant)
      .BindText(4, query.gpu_model_substring)
      .BindText(5, query.shape)
      .Bind(6, int64_t{query.dtype})
      .Bind(7, int64_t{query.limit})
      .Bind(8, int64_t{query.cache_mode})
      .Bind(9, int64_t{query.hot_batch})
      .Bind(10, int64_t{query.backend});
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
    SetMeasurementColumns(q.Int(15), q.Int(16), q.Int(17), &h.series);
    out.push_back(std::move(h));
  }
  return out;
}

absl::StatusOr<std::vector<SeriesPoint>> SqliteStore::ListSeries() {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict, cache_mode,
       hot_batch, backend
FROM series ORDER BY op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend)sql");
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
    SetMeasurementColumns(q.Int(10), q.Int(11), q.Int(12), &p.series);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kbench::server
