// PostgresStore's reads of the performance history: a series' baseline and pinned reference, history
// rows, the series' latest points. Split from postgres_store.cc to keep each file about one thing.
#include "absl/strings/str_cat.h"
#include "server/store/postgres_store.h"
#include "server/store/result_columns.h"

namespace kbench::server {

using pg::Connection;
using pg::Params;
using pg::Rows;

namespace {

// A series' OK results on a branch: newest first (the baseline) or oldest first (the pinned
// reference). `samples`: whether to fetch the samples column at all (the reference never does:
// each row's blob would cross the connection), and which rows the caller already holds.
absl::StatusOr<std::vector<BaselineResult>> SeriesResults(Connection& c, const SeriesKey& series,
                                                          absl::string_view branch, int limit,
                                                          absl::string_view exclude_job_id, int64_t after_ms,
                                                          bool newest_first, bool samples,
                                                          const HaveSamples& have_samples) {
  // xmin (the writing transaction) is the revision: an ON CONFLICT update writes a new row version.
  const char* order = newest_first ? "DESC" : "ASC";
  absl::StatusOr<Rows> r = c.Query(absl::StrCat("SELECT job_id, median_ns, ", samples ? "samples" : "NULL", R"sql(, attempt, idx, xmin::text::bigint FROM results
WHERE op = $1 AND variant = $2 AND shape = $3 AND dtype = $4 AND gpu_model = $5 AND branch = $6 AND status = $7
  AND job_id != $8 AND cache_mode = $10 AND hot_batch = $11 AND backend = $12 AND ($13 = 0 OR finished_ms > $13)
ORDER BY finished_ms )sql",
                                                order, ", seq ", order, " LIMIT $9"),
                                   Params()
                                       .Text(series.op)
                                       .Text(series.variant)
                                       .Text(series.shape)
                                       .Int(series.dtype)
                                       .Text(series.gpu_model)
                                       .Text(branch)
                                       .Int(v1::OK)
                                       .Text(exclude_job_id)
                                       .Int(limit)
                                       .Int(series.cache_mode)
                                       .Int(series.hot_batch)
                                       .Int(series.backend)
                                       .Int(after_ms));
  if (!r.ok()) return r.status();
  std::vector<BaselineResult> out;
  for (int i = 0; i < r->size(); ++i) {
    BaselineResult& b = out.emplace_back();
    b.job_id = r->Text(i, 0);
    b.median_ns = r->Double(i, 1);
    b.attempt = static_cast<int32_t>(r->Int(i, 3));
    b.index = static_cast<int32_t>(r->Int(i, 4));
    b.revision = r->Int(i, 5);
    b.samples_omitted = !samples || (have_samples && have_samples(b));
    if (!b.samples_omitted) b.samples_ns = UnpackSorted(r->Text(i, 2));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<BaselineResult>> PostgresStore::BaselineResults(const SeriesKey& series,
                                                                           absl::string_view branch, int limit,
                                                                           absl::string_view exclude_job_id,
                                                                           const HaveSamples& have_samples,
                                                                           int64_t after_ms) {
  return Read([&](Connection& c) {
    return SeriesResults(c, series, branch, limit, exclude_job_id, after_ms, /*newest_first=*/true,
                         /*samples=*/true, have_samples);
  });
}

absl::StatusOr<std::vector<BaselineResult>> PostgresStore::ReferenceResults(const SeriesKey& series,
                                                                            absl::string_view branch, int limit,
                                                                            absl::string_view exclude_job_id,
                                                                            int64_t after_ms) {
  return Read([&](Connection& c) {
    return SeriesResults(c, series, branch, limit, exclude_job_id, after_ms, /*newest_first=*/false,
                         /*samples=*/false, nullptr);
  });
}

absl::StatusOr<std::vector<HistoryRow>> PostgresStore::History(const HistoryQuery& query) {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<HistoryRow>> {
    absl::StatusOr<Rows> r = c.Query(R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict, change_fraction,
       p_value, baseline_median_ns, branch, git_sha, cache_mode, hot_batch, backend
FROM results
WHERE op = $1 AND status = $2 AND ($3 = '' OR variant = $3) AND ($4 = '' OR strpos(lower(gpu_model), lower($4)) > 0)
  AND ($5 = '' OR shape = $5) AND ($6 = 0 OR dtype = $6) AND ($8 = 0 OR cache_mode = $8)
  AND ($9 = 0 OR hot_batch = $9) AND ($10 = 0 OR backend = $10)
ORDER BY finished_ms DESC, seq DESC LIMIT $7)sql",
                                     Params()
                                         .Text(query.op)
                                         .Int(v1::OK)
                                         .Text(query.variant)
                                         .Text(query.gpu_model_substring)
                                         .Text(query.shape)
                                         .Int(query.dtype)
                                         .Int(query.limit)
                                         .Int(query.cache_mode)
                                         .Int(query.hot_batch)
                                         .Int(query.backend));
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
      SetMeasurementColumns(r->Int(i, 15), r->Int(i, 16), r->Int(i, 17), &h.series);
      out.push_back(std::move(h));
    }
    return out;
  });
}

absl::StatusOr<std::vector<SeriesPoint>> PostgresStore::ListSeries() {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<SeriesPoint>> {
    absl::StatusOr<Rows> r = c.Query(R"sql(
SELECT op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, utilization, verdict, cache_mode,
       hot_batch, backend
FROM series ORDER BY op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend)sql");
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
      SetMeasurementColumns(r->Int(i, 10), r->Int(i, 11), r->Int(i, 12), &p.series);
      out.push_back(std::move(p));
    }
    return out;
  });
}

}  // namespace kbench::server
