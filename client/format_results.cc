// The results table in every format: per-result timing, roofline against the calibrated ceiling,
// bound class and correctness; see format.h.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "client/format.h"
#include "client/units.h"

namespace kbench::client {
namespace {

constexpr size_t kMessageWidth = 48;
constexpr char kWarningMark[] = " !";  // after util: the roofline has a warning, listed under the table

// "! op variant problem: warning" for each flagged result of a table, so no flag goes unexplained. A
// warning several results share (a suspect calibration flags every result of its device) is listed
// once, naming the first of them and how many more share it.
std::string WarningNotes(const std::vector<const v1::Result*>& results, Format format) {
  std::vector<std::pair<std::string, std::vector<const v1::Result*>>> groups;  // in order of appearance
  for (const auto* r : results) {
    const std::string& w = r->roofline().warning();
    if (w.empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == w; });
    if (it == groups.end()) it = groups.insert(groups.end(), {w, {}});
    it->second.push_back(r);
  }
  std::string out;
  for (const auto& [warning, flagged] : groups) {
    const v1::Result& r = *flagged.front();
    absl::StrAppend(&out, format == Format::kMarkdown ? "\n- " : "", "! ", r.op(), " ", r.variant(), " ",
                    api::ShapeLabel(r.problem()), " ", api::DtypeName(r.problem().dtype()),
                    flagged.size() > 1 ? absl::StrCat(" (and ", flagged.size() - 1, " more results)") : "", ": ",
                    warning, "\n");
  }
  return out;
}

const v1::RooflineCeiling* Calibrated(const v1::Result& r) {
  for (const auto& c : r.roofline().ceilings())
    if (c.source() == "calibrated") return &c;
  return nullptr;
}

// A result is timed when it has samples; INCORRECT and error results usually are not.
bool Timed(const v1::Result& r) { return r.timing().count() > 0 || r.timing().median_ns() > 0; }

std::string DeviceKey(const v1::Result& r) {
  return absl::StrCat(r.worker_id(), "/", r.device().uuid().empty() ? r.device().name() : r.device().uuid());
}

std::string DeviceHeader(const std::vector<const v1::Result*>& group) {
  std::string name;
  double copy = 0;
  for (const auto* r : group) {
    if (name.empty()) name = r->device().name();
    // Only a ceiling that is the copy is the copy: since ceilings per traffic mix, each row names its own.
    if (const auto* c = Calibrated(*r);
        c != nullptr && copy == 0 && (c->bandwidth_ceiling().empty() || c->bandwidth_ceiling() == "copy"))
      copy = c->bandwidth_bytes_per_second();
  }
  if (name.empty() && copy == 0) return "";
  std::string s = absl::StrCat("device: ", name.empty() ? "unknown" : name);
  if (copy > 0) absl::StrAppend(&s, ", calibrated copy ", FormatGiga(copy), " GB/s");
  return s;
}

// The ceiling a row's %BW or %FLOP is against: the peak's name for a compute-bound result, else the
// bandwidth's ("2:1", "read-only", "L2 read (HOT, ...)"); "" for results from before the names.
std::string CeilingName(const v1::Result& r) {
  const auto* c = Calibrated(r);
  if (c == nullptr) return "";
  return r.roofline().bound_class() == v1::COMPUTE_BOUND ? c->peak_ceiling() : c->bandwidth_ceiling();
}

// "1980/2619 MHz 512 W": SM and memory clocks and power at one moment; "" when unknown.
std::string FormatClocks(const v1::DeviceClocks& c) {
  if (c.sm_clock_mhz() == 0 && c.memory_clock_mhz() == 0) return "";
  return absl::StrFormat("%d/%d MHz %.0f W", c.sm_clock_mhz(), c.memory_clock_mhz(), c.power_watts());
}

Table HumanTable(const std::vector<const v1::Result*>& results, bool with_samples) {
  // Columns only some results have appear when one of the table's does.
  bool any_ceiling = false, any_clocks = false, any_write_back = false;
  for (const auto* r : results) {
    any_ceiling = any_ceiling || !CeilingName(*r).empty();
    any_clocks = any_clocks || r->timing().has_clocks_start();
    any_write_back = any_write_back || r->timing().write_back_ns() != 0;
  }
  Table t;
  // ±RSE is the median's standard error from this run's samples: separate runs differ by more.
  t.header = {"op",      "variant", "problem", "dtype", "status", "median", "±RSE within-run", "GB/s",
              "GFLOP/s", "%BW",     "%FLOP",   "util",  "class",  "check",  "samples"};
  t.numeric = {false, false, false, false, false, true, true, true, true, true, true, true, false, false, true};
  if (any_ceiling) t.header.push_back("ceiling"), t.numeric.push_back(false);
  if (any_write_back) t.header.push_back("write-back"), t.numeric.push_back(true);
  if (any_clocks) t.header.push_back("clocks start -> end"), t.numeric.push_back(false);
  if (with_samples) {
    for (const char* h : {"min", "p10", "p90", "max"}) t.header.push_back(h), t.numeric.push_back(true);
  }
  for (const auto* r : results) {
    const bool timed = Timed(*r);
    const auto* cal = Calibrated(*r);
    const auto& tm = r->timing();
    const auto& rf = r->roofline();
    auto if_timed = [&](std::string s) { return timed ? s : "-"; };
    std::string problem = api::ShapeLabel(r->problem());
    for (const auto& f : r->problem().flags()) absl::StrAppend(&problem, " ", f);
    std::vector<std::string> row = {
        r->op(),
        r->variant(),
        problem,
        api::DtypeName(r->problem().dtype()),
        api::StatusName(r->status()),
        if_timed(FormatDuration(tm.median_ns())),
        if_timed(FormatRse(tm.median_relative_standard_error())),
        timed && rf.achieved_bytes_per_second() > 0 ? FormatGiga(rf.achieved_bytes_per_second()) : "-",
        timed && rf.achieved_flops_per_second() > 0 ? FormatGiga(rf.achieved_flops_per_second()) : "-",
        timed && cal && cal->bandwidth_bytes_per_second() > 0 ? FormatPercent(cal->bandwidth_fraction()) : "-",
        timed && cal && cal->peak_flops_per_second() > 0 && rf.flops() > 0 ? FormatPercent(cal->flops_fraction()) : "-",
        timed && cal ? absl::StrCat(FormatPercent(cal->utilization()), rf.warning().empty() ? "" : kWarningMark) : "-",
        timed ? api::BoundClassName(rf.bound_class()) : "-",
        CheckCell(*r),
        // "120 (3 throttled)": throttled samples are kept but left out of the statistics.
        timed ? absl::StrCat(tm.count(), tm.discarded_throttled() > 0
                                             ? absl::StrCat(" (+", tm.discarded_throttled(), " throttled)")
                                             : "")
              : "-",
    };
    if (any_ceiling) {
      std::string name = timed ? CeilingName(*r) : "";
      row.push_back(name.empty() ? "-" : name);
    }
    if (any_write_back) row.push_back(timed && tm.write_back_ns() != 0 ? FormatDuration(tm.write_back_ns()) : "-");
    if (any_clocks) {
      const std::string start = FormatClocks(tm.clocks_start()), end = FormatClocks(tm.clocks_end());
      row.push_back(start.empty() ? "-" : absl::StrCat(start, " -> ", end.empty() ? "?" : end));
    }
    if (with_samples) {
      for (double v : {tm.min_ns(), tm.p10_ns(), tm.p90_ns(), tm.max_ns()}) row.push_back(if_timed(FormatDuration(v)));
    }
    t.AddRow(std::move(row));
  }
  return t;
}

Table CsvTable(const std::vector<v1::Result>& results, bool with_samples) {
  Table t;
  t.header = {"job_id",
              "index",
              "op",
              "variant",
              "problem",
              "dims",
              "dtype",
              "flags",
              "status",
              "median_ns",
              "mean_ns",
              "stddev_ns",
              "min_ns",
              "max_ns",
              "p10_ns",
              "p90_ns",
              "median_relative_standard_error",
              "samples",
              "cache_mode",
              "stop_reason",
              "throttled",
              "bytes",
              "flops",
              "achieved_bytes_per_second",
              "achieved_flops_per_second",
              "calibrated_bandwidth_bytes_per_second",
              "calibrated_peak_flops_per_second",
              "calibrated_bandwidth_fraction",
              "calibrated_flops_fraction",
              "calibrated_utilization",
              "roofline_warning",
              "bound_class",
              "correct",
              "max_abs_error",
              "max_rel_error",
              "mismatches",
              "device",
              "worker_id",
              "status_message",
              "calibrated_bandwidth_ceiling",
              "calibrated_peak_ceiling",
              "l2_resident",
              "write_back_ns",
              "throttled_samples",
              "sm_clock_mhz_start",
              "memory_clock_mhz_start",
              "power_watts_start",
              "sm_clock_mhz_end",
              "memory_clock_mhz_end",
              "power_watts_end"};
  if (with_samples) t.header.push_back("samples_ns");
  for (const auto& r : results) {
    const auto& tm = r.timing();
    const auto& rf = r.roofline();
    const auto* cal = Calibrated(r);
    const auto& c = r.correctness();
    auto cal_value = [&](double v) { return cal ? FormatExact(v) : ""; };
    std::string dims = absl::StrJoin(r.problem().dims(), ",", [](std::string* o, const v1::Dim& d) {
      absl::StrAppend(o, d.name(), "=", d.value());
    });
    std::vector<std::string> row = {r.job_id(),
                                    absl::StrCat(r.index()),
                                    r.op(),
                                    r.variant(),
                                    api::ShapeLabel(r.problem()),
                                    dims,
                                    api::DtypeName(r.problem().dtype()),
                                    absl::StrJoin(r.problem().flags(), " "),
                                    api::StatusName(r.status()),
                                    FormatExact(tm.median_ns()),
                                    FormatExact(tm.mean_ns()),
                                    FormatExact(tm.stddev_ns()),
                                    FormatExact(tm.min_ns()),
                                    FormatExact(tm.max_ns()),
                                    FormatExact(tm.p10_ns()),
                                    FormatExact(tm.p90_ns()),
                                    FormatExact(tm.median_relative_standard_error()),
                                    absl::StrCat(tm.count()),
                                    api::CacheModeName(tm.cache_mode()),
                                    api::StopReasonName(tm.stop_reason()),
                                    tm.throttled() ? "true" : "false",
                                    FormatExact(rf.bytes()),
                                    FormatExact(rf.flops()),
                                    FormatExact(rf.achieved_bytes_per_second()),
                                    FormatExact(rf.achieved_flops_per_second()),
                                    cal_value(cal ? cal->bandwidth_bytes_per_second() : 0),
                                    cal_value(cal ? cal->peak_flops_per_second() : 0),
                                    cal_value(cal ? cal->bandwidth_fraction() : 0),
                                    cal_value(cal ? cal->flops_fraction() : 0),
                                    cal_value(cal ? cal->utilization() : 0),
                                    rf.warning(),
                                    api::BoundClassName(rf.bound_class()),
                                    c.passed() ? "true" : "false",
                                    FormatExact(c.max_abs_error()),
                                    FormatExact(c.max_rel_error()),
                                    absl::StrCat(c.mismatches()),
                                    r.device().name(),
                                    r.worker_id(),
                                    r.status_message(),
                                    cal ? cal->bandwidth_ceiling() : "",
                                    cal ? cal->peak_ceiling() : "",
                                    rf.l2_resident() ? "true" : "false",
                                    FormatExact(tm.write_back_ns()),
                                    absl::StrCat(tm.discarded_throttled()),
                                    absl::StrCat(tm.clocks_start().sm_clock_mhz()),
                                    absl::StrCat(tm.clocks_start().memory_clock_mhz()),
                                    FormatExact(tm.clocks_start().power_watts()),
                                    absl::StrCat(tm.clocks_end().sm_clock_mhz()),
                                    absl::StrCat(tm.clocks_end().memory_clock_mhz()),
                                    FormatExact(tm.clocks_end().power_watts())};
    if (with_samples)
      row.push_back(absl::StrJoin(tm.samples_ns(), " ", [](std::string* o, double v) { o->append(FormatExact(v)); }));
    t.AddRow(std::move(row));
  }
  return t;
}

}  // namespace

std::string CheckCell(const v1::Result& r) {
  const auto& c = r.correctness();
  if (r.status() == v1::INCORRECT || (r.status() == v1::OK && !c.passed() && c.trials() > 0)) {
    std::string s = absl::StrFormat("FAIL max_rel=%.2g", c.max_rel_error());
    if (c.non_finite() > 0) absl::StrAppend(&s, " non_finite=", c.non_finite());
    return s;
  }
  if (r.status() == v1::OK) return c.passed() ? "ok" : "-";
  return r.status_message().empty() ? "-" : Abbreviate(r.status_message(), kMessageWidth);
}

std::string FormatResults(const std::vector<v1::Result>& results, Format format, bool with_samples) {
  if (format == Format::kJson) {
    std::vector<const google::protobuf::Message*> ms;
    for (const auto& r : results) ms.push_back(&r);
    return ToJsonArray(ms);
  }
  if (format == Format::kCsv) return RenderCsv(CsvTable(results, with_samples));
  // One table per device, in order of first appearance, so each table sits under its ceiling.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const v1::Result*>> groups;
  for (const auto& r : results) {
    auto key = DeviceKey(r);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  if (results.empty()) return Render(HumanTable({}, with_samples), format);
  std::string out;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& group = groups[order[i]];
    if (i > 0) out += "\n";
    std::string header = DeviceHeader(group);
    if (!header.empty()) out += format == Format::kMarkdown ? absl::StrCat("**", header, "**\n\n") : header + "\n";
    out += Render(HumanTable(group, with_samples), format);
    out += WarningNotes(group, format);
  }
  return out;
}

}  // namespace kbench::client
