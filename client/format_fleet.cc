// Tables of jobs, workers and the kernel catalog in every format; see format.h.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "client/format.h"
#include "client/units.h"

namespace kbench::client {
namespace {

// The Triton column: the version, "absent" (the reason is in the notes and in json/csv), or "-".
std::string TritonCell(const std::string& triton) {
  if (triton.empty()) return "-";
  if (absl::StartsWith(triton, "absent")) return "absent";
  return triton.substr(0, triton.find(" ("));
}

constexpr size_t kErrorWidth = 60;
constexpr size_t kDescriptionWidth = 60;

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

// "ok", or "UNHEALTHY: <reason>" (the reason's first line, cut, in a terminal table).
std::string HealthCell(const v1::WorkerStatus& w, Format format) {
  if (!w.unhealthy()) return "ok";
  if (w.health_reason().empty()) return "UNHEALTHY";
  return absl::StrCat("UNHEALTHY: ",
                      format == Format::kTable ? Abbreviate(w.health_reason(), kErrorWidth) : w.health_reason());
}

std::string DtypeList(const google::protobuf::RepeatedField<int>& dtypes, absl::string_view sep) {
  return absl::StrJoin(dtypes, sep,
                       [](std::string* o, int d) { o->append(api::DtypeName(static_cast<v1::Dtype>(d))); });
}

template <typename M>
std::string Json(const std::vector<M>& items) {
  std::vector<const google::protobuf::Message*> ms;
  for (const auto& m : items) ms.push_back(&m);
  return ToJsonArray(ms);
}

std::string Progress(const v1::Progress& p) {
  if (p.results_total() > 0) return absl::StrCat(p.results_done(), "/", p.results_total());
  return p.results_done() > 0 ? absl::StrCat(p.results_done(), "/?") : "-";
}

}  // namespace

std::string FormatJobs(const std::vector<v1::Job>& jobs, Format format, int64_t now_ms) {
  if (format == Format::kJson) return Json(jobs);
  Table t;
  if (format == Format::kCsv) {
    t.header = {"job_id",    "op",       "state",           "results_done",    "results_total",    "current",
                "worker_id", "attempts", "created_unix_ms", "started_unix_ms", "finished_unix_ms", "error"};
    for (const auto& j : jobs) {
      t.AddRow({j.job_id(), j.spec().op(), api::JobStateName(j.state()), absl::StrCat(j.progress().results_done()),
                absl::StrCat(j.progress().results_total()), j.progress().current(), j.worker_id(),
                absl::StrCat(j.attempts()), absl::StrCat(j.created_unix_ms()), absl::StrCat(j.started_unix_ms()),
                absl::StrCat(j.finished_unix_ms()), j.error()});
    }
    return RenderCsv(t);
  }
  t.header = {"id", "op", "state", "progress", "worker", "attempts", "age", "error"};
  t.numeric = {false, false, false, true, false, true, true, false};
  for (const auto& j : jobs) {
    t.AddRow({j.job_id(), j.spec().op(), api::JobStateName(j.state()), Progress(j.progress()), OrDash(j.worker_id()),
              absl::StrCat(j.attempts()), j.created_unix_ms() > 0 ? FormatAge(now_ms - j.created_unix_ms()) : "-",
              j.error().empty() ? "" : Abbreviate(j.error(), kErrorWidth)});
  }
  return Render(t, format);
}

std::string FormatWorkers(const std::vector<v1::WorkerStatus>& workers, Format format, int64_t now_ms) {
  if (format == Format::kJson) {
    // The catalog is what `kernels` is for; repeated per worker it would bury everything else.
    std::vector<v1::WorkerStatus> slim = workers;
    for (auto& w : slim) w.mutable_info()->clear_catalog();
    return Json(slim);
  }
  const bool csv = format == Format::kCsv;
  Table t;
  if (csv) {
    t.header = {"worker_id",
                "name",
                "state",
                "unhealthy",
                "health_reason",
                "address",
                "last_heartbeat_unix_ms",
                "current_job_id",
                "device_index",
                "device",
                "backend",
                "compute_capability",
                "memory_bytes",
                "copy_bytes_per_second",
                "peak_f32_flops_per_second",
                "triton"};
  } else {
    t.header = {"id", "name", "state", "health", "heartbeat", "job", "device", "memory", "copy GB/s", "f32 GFLOP/s",
                "triton"};
    t.numeric = {false, false, false, false, true, false, false, true, true, true, false};
    t.group_columns = 6;
  }
  std::string notes;  // calibrations that failed their checks, explained under the table
  for (const auto& w : workers) {
    const auto& info = w.info();
    std::vector<std::string> head;
    if (csv) {
      head = {info.worker_id(),
              info.name(),
              w.state(),
              w.unhealthy() ? "true" : "false",
              w.health_reason(),
              info.address(),
              absl::StrCat(w.last_heartbeat_unix_ms()),
              w.current_job_id()};
    } else {
      head = {info.worker_id(), OrDash(info.name()), w.state(), HealthCell(w, format),
              w.last_heartbeat_unix_ms() > 0 ? FormatAge(now_ms - w.last_heartbeat_unix_ms()) : "-",
              OrDash(w.current_job_id())};
    }
    if (info.devices().empty()) {
      head.resize(t.header.size(), csv ? "" : "-");
      t.AddRow(head);
      continue;
    }
    for (int i = 0; i < info.devices_size(); ++i) {
      const auto& d = info.devices(i);
      // Calibrations come one per device in the same order; match by uuid first in case they do not.
      const v1::Calibration* cal = nullptr;
      for (const auto& c : info.calibrations())
        if (!d.uuid().empty() && c.device_uuid() == d.uuid()) cal = &c;
      if (cal == nullptr && i < info.calibrations_size()) cal = &info.calibrations(i);
      double copy = cal ? cal->copy_bytes_per_second() : 0;
      double f32 = 0;
      if (cal != nullptr)
        if (auto it = cal->peak_flops_per_second().find("f32"); it != cal->peak_flops_per_second().end())
          f32 = it->second;
      std::vector<std::string> row = head;
      if (csv) {
        row.insert(row.end(), {absl::StrCat(d.index()), d.name(), api::BackendName(d.backend()),
                               absl::StrCat(d.compute_capability_major() * 10 + d.compute_capability_minor()),
                               absl::StrCat(d.memory_bytes()), FormatExact(copy), FormatExact(f32), d.triton()});
      } else {
        row.insert(row.end(), {OrDash(d.name()), d.memory_bytes() > 0 ? FormatBytes(d.memory_bytes()) : "-",
                               copy > 0 ? FormatGiga(copy) + (cal->warning().empty() ? "" : " !") : "-",
                               f32 > 0 ? FormatGiga(f32) : "-", TritonCell(d.triton())});
        if (cal != nullptr && !cal->warning().empty())
          absl::StrAppend(&notes, "! ", info.worker_id(), " device ", d.index(), ": ", cal->warning(), "\n");
        if (absl::StartsWith(d.triton(), "absent"))  // why Triton kernels come back SKIPPED there
          absl::StrAppend(&notes, "  ", info.worker_id(), " device ", d.index(), ": triton ", d.triton(), "\n");
      }
      t.AddRow(std::move(row), i > 0);
    }
  }
  return Render(t, format) + notes;
}

std::string FormatKernels(const std::vector<v1::OpInfo>& ops, Format format) {
  if (format == Format::kJson) return Json(ops);
  const bool csv = format == Format::kCsv;
  Table t;
  t.header = {"op", "dims", "dtypes", "presets", "variant", "backend", "description"};
  if (csv)
    t.header = {"op",       "dims",           "dtypes",     "presets", "variant", "backend", "min_compute_capability",
                "baseline", "variant_dtypes", "description"};
  t.group_columns = 4;
  for (const auto& op : ops) {
    std::vector<std::string> head = {op.name(), absl::StrJoin(op.dims(), csv ? " " : ","),
                                     DtypeList(op.dtypes(), csv ? " " : ","),
                                     absl::StrJoin(op.presets(), " ", [](std::string* o, const v1::PresetInfo& p) {
                                       absl::StrAppend(o, p.name(), "(", p.problems_size(), ")");
                                     })};
    if (op.variants().empty()) {
      head.resize(t.header.size(), csv ? "" : "-");
      t.AddRow(head);
      continue;
    }
    bool first = true;
    for (const auto& v : op.variants()) {
      std::vector<std::string> row = head;
      if (csv) {
        row.insert(row.end(), {v.name(), api::BackendName(v.backend()), absl::StrCat(v.min_compute_capability()),
                               v.is_baseline() ? "true" : "false", DtypeList(v.dtypes(), " "), v.description()});
      } else {
        std::string backend = api::BackendName(v.backend());
        if (v.min_compute_capability() > 0) absl::StrAppend(&backend, " sm", v.min_compute_capability(), "+");
        std::string desc = absl::StrCat(v.is_baseline() ? "[baseline] " : "", v.description());
        row.insert(row.end(),
                   {v.name(), backend, format == Format::kTable ? Abbreviate(desc, kDescriptionWidth) : desc});
      }
      t.AddRow(std::move(row), !first);
      first = false;
    }
  }
  if (csv) return Render(t, format);
  // What a shape may leave out or set to 0 (catalog.proto): too long for the dims column.
  std::string notes;
  for (const auto& op : ops) {
    std::vector<std::string> parts;
    if (!op.derived_dims().empty())
      parts.push_back(absl::StrJoin(op.derived_dims(), ", ", [](std::string* o, const v1::DerivedDim& d) {
        absl::StrAppend(o, d.name(), " = ", d.expr());
      }));
    if (!op.zero_dims().empty()) parts.push_back(absl::StrCat(absl::StrJoin(op.zero_dims(), ", "), " may be 0"));
    if (!parts.empty()) absl::StrAppend(&notes, "  ", op.name(), ": ", absl::StrJoin(parts, "; "), "\n");
  }
  if (notes.empty()) return Render(t, format);
  return absl::StrCat(Render(t, format),
                      "\nDerived dims, which a shape may leave out (named, or positional without them), and dims "
                      "that may be 0:\n",
                      notes);
}

std::string FormatPresets(const v1::OpInfo& op, Format format) {
  if (format == Format::kJson) {
    std::vector<const google::protobuf::Message*> presets;
    for (const v1::PresetInfo& p : op.presets()) presets.push_back(&p);
    return ToJsonArray(presets);
  }
  Table t;
  t.header = {"preset", "shape", "dtype"};
  t.group_columns = 1;
  for (const v1::PresetInfo& preset : op.presets()) {
    bool first = true;
    for (const v1::Problem& p : preset.problems()) {
      t.AddRow({preset.name(), api::ShapeArgument(p), p.dtype() == v1::DTYPE_UNSPECIFIED ? "-" : api::DtypeName(p.dtype())}, !first);
      first = false;
    }
  }
  if (format == Format::kCsv) return Render(t, format);
  return absl::StrCat(op.name(), " dims: ", absl::StrJoin(op.dims(), ","), "\n", Render(t, format));
}

}  // namespace kbench::client
