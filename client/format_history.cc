// The performance history of series (GetHistory) in every format: one table per series under a line
// naming it and its baseline; see format.h.
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/names.h"
#include "client/format.h"
#include "client/units.h"
#include "google/protobuf/util/json_util.h"

namespace kbench::client {
namespace {

std::string SeriesKey(const v1::HistoryPoint& p) {
  return absl::StrCat(p.variant(), "\x1f", p.shape(), "\x1f", p.dtype(), "\x1f", p.gpu_model(), "\x1f",
                      p.cache_mode(), "\x1f", p.hot_batch(), "\x1f", p.backend());
}

// How the series was measured: "cold", "hot batch 20"; the backend after the device ("cuda").
std::string MeasuredText(const v1::HistoryPoint& p) {
  if (p.cache_mode() != v1::HOT) return "cold";
  return p.hot_batch() > 0 ? absl::StrCat("hot batch ", p.hot_batch()) : "hot";
}

// " (cuda)"; nothing when the results did not report their backend.
std::string BackendText(const v1::HistoryPoint& p) {
  return p.backend() == v1::BACKEND_UNSPECIFIED ? "" : absl::StrCat(" (", api::BackendName(p.backend()), ")");
}

std::string SeriesLabel(absl::string_view op, const v1::HistoryPoint& p) {
  return absl::StrCat(op, " ", p.variant().empty() ? "-" : p.variant(), " ", p.shape().empty() ? "-" : p.shape(), " ",
                      api::DtypeName(p.dtype()), " ", MeasuredText(p), " on ",
                      p.gpu_model().empty() ? "unknown device" : p.gpu_model(), BackendText(p));
}

// Series in order of first appearance (the points come newest first, so the first point of each
// series is its newest).
std::vector<std::vector<const v1::HistoryPoint*>> Series(const v1::GetHistoryResponse& history) {
  std::vector<std::vector<const v1::HistoryPoint*>> series;
  std::map<std::string, size_t> index;
  for (const auto& p : history.points()) {
    auto [it, added] = index.emplace(SeriesKey(p), series.size());
    if (added) series.emplace_back();
    series[it->second].push_back(&p);
  }
  return series;
}

std::string IsoUtc(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

bool HasBaseline(const v1::HistoryPoint& p) {
  return p.verdict() != v1::NO_BASELINE && p.verdict() != v1::VERDICT_UNSPECIFIED && p.baseline_median_ns() > 0;
}

// "SLOWER", or "SLOWER (muted)" on a series an admin muted: judged and shown, but not alerted on.
std::string VerdictCell(const v1::HistoryPoint& p) {
  return p.muted() ? absl::StrCat(v1::Verdict_Name(p.verdict()), " (muted)") : v1::Verdict_Name(p.verdict());
}

// +5.2% / -3.1%: the median against the baseline's.
std::string ChangeCell(const v1::HistoryPoint& p) {
  if (!HasBaseline(p)) return "-";
  return absl::StrCat(p.change_fraction() >= 0 ? "+" : "", FormatPercent(p.change_fraction()));
}

std::string PValueCell(const v1::HistoryPoint& p) {
  if (!HasBaseline(p)) return "-";
  return p.p_value() < 1e-4 ? "<0.0001" : FormatSig(p.p_value(), 2);
}

// The series' run-to-run spread, beside its medians: "run-to-run ±0.8% over 20 runs".
std::string RunSpreadText(const v1::HistoryPoint& p) {
  if (p.series_baseline_runs() < 2) return "run-to-run spread unknown (fewer than 2 runs)";
  return absl::StrCat("run-to-run ", FormatRse(p.series_run_spread()), " over ", p.series_baseline_runs(), " runs");
}

std::string SeriesHeader(absl::string_view op, const v1::GetHistoryResponse& history,
                         const std::vector<const v1::HistoryPoint*>& points, bool newest_series) {
  std::string s = SeriesLabel(op, *points.front());
  // The response's baseline is the current one of the newest point's series; other series show the
  // baseline their newest point was compared with.
  const double baseline = newest_series && history.baseline_median_ns() > 0 ? history.baseline_median_ns()
                                                                             : points.front()->baseline_median_ns();
  if (baseline <= 0) return absl::StrCat(s, ": no baseline");
  absl::StrAppend(&s, ": baseline ", FormatDuration(baseline));
  if (newest_series && history.baseline_results() > 0)
    absl::StrAppend(&s, " (", history.baseline_results(), " main-branch runs)");
  absl::StrAppend(&s, ", ", RunSpreadText(*points.front()));
  return s;
}

Table HumanTable(const std::vector<const v1::HistoryPoint*>& points) {
  Table t;
  t.header = {"job", "finished (UTC)", "median", "±run", "util", "verdict", "change", "p-value", "branch", "git sha"};
  t.numeric = {false, false, true, true, true, false, true, true, false, false};
  for (const auto* p : points) {
    t.AddRow({p->job_id(), IsoUtc(p->finished_unix_ms()), FormatDuration(p->median_ns()),
              p->series_baseline_runs() >= 2 ? FormatRse(p->series_run_spread()) : "-",
              p->utilization() > 0 ? FormatPercent(p->utilization()) : "-", VerdictCell(*p),
              ChangeCell(*p), PValueCell(*p), p->branch().empty() ? "-" : p->branch(),
              p->git_sha().empty() ? "-" : p->git_sha().substr(0, 12)});
  }
  return t;
}

Table CsvTable(absl::string_view op, const v1::GetHistoryResponse& history) {
  Table t;
  t.header = {"op",          "variant", "shape",           "dtype",   "gpu_model", "job_id", "finished_unix_ms",
              "median_ns",   "utilization", "verdict",     "change_fraction", "p_value", "branch", "git_sha",
              "baseline_median_ns", "series_run_spread", "series_baseline_runs", "cache_mode", "hot_batch",
              "backend"};
  for (const auto& points : Series(history)) {
    for (const auto* p : points) {
      t.AddRow({std::string(op), p->variant(), p->shape(), api::DtypeName(p->dtype()), p->gpu_model(), p->job_id(),
                absl::StrCat(p->finished_unix_ms()), FormatExact(p->median_ns()), FormatExact(p->utilization()),
                v1::Verdict_Name(p->verdict()), FormatExact(p->change_fraction()), FormatExact(p->p_value()),
                p->branch(), p->git_sha(), FormatExact(p->baseline_median_ns()),
                FormatExact(p->series_run_spread()), absl::StrCat(p->series_baseline_runs()),
                p->cache_mode() == v1::HOT ? "hot" : "cold", absl::StrCat(p->hot_batch()),
                p->backend() == v1::BACKEND_UNSPECIFIED ? "" : api::BackendName(p->backend())});
    }
  }
  return t;
}

}  // namespace

std::string FormatHistory(absl::string_view op, const v1::GetHistoryResponse& history, Format format) {
  if (format == Format::kJson) {
    // The response itself: the points with the current baseline.
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    options.always_print_primitive_fields = true;
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(history, &json, options).ok()) json = "null";
    return json + "\n";
  }
  if (format == Format::kCsv) return RenderCsv(CsvTable(op, history));
  const auto series = Series(history);
  if (series.empty()) return Render(HumanTable({}), format);
  std::string out;
  for (size_t i = 0; i < series.size(); ++i) {
    if (i > 0) out += "\n";
    const std::string header = SeriesHeader(op, history, series[i], i == 0);
    out += format == Format::kMarkdown ? absl::StrCat("**", header, "**\n\n") : header + "\n";
    out += Render(HumanTable(series[i]), format);
  }
  return out;
}

v1::GetHistoryResponse OnlyChanged(const v1::GetHistoryResponse& history) {
  v1::GetHistoryResponse out;
  const auto series = Series(history);
  for (size_t i = 0; i < series.size(); ++i) {
    const v1::Verdict newest = series[i].front()->verdict();
    if (newest != v1::SLOWER && newest != v1::FASTER) continue;
    for (const auto* p : series[i]) *out.add_points() = *p;
    if (i == 0) {
      out.set_baseline_median_ns(history.baseline_median_ns());
      out.set_baseline_results(history.baseline_results());
    }
  }
  return out;
}

std::vector<std::string> RegressedSeries(absl::string_view op, const v1::GetHistoryResponse& history) {
  std::vector<std::string> regressed;
  for (const auto& points : Series(history))
    if (points.front()->verdict() == v1::SLOWER && !points.front()->muted())
      regressed.push_back(SeriesLabel(op, *points.front()));
  return regressed;
}

}  // namespace kbench::client
