// `kbench-client series`: the admin controls of the performance series, recorded by the coordinator
// with who and when: mute / unmute a series (its verdicts are still stored and shown, but raise no
// alert), override its verdict threshold, mark a known step (a driver upgrade: baseline and pinned
// reference restart after it), and list what is recorded. Changing a control needs the admin role.
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "api/names.h"
#include "client/commands.h"
#include "client/format.h"

namespace kbench::client {
namespace {

// "5%" or "0.05" as a fraction.
absl::StatusOr<double> ParseFraction(absl::string_view text) {
  double v = 0;
  absl::string_view number = text;
  const bool percent = absl::ConsumeSuffix(&number, "%");
  if (!absl::SimpleAtod(number, &v) || !(v >= 0))
    return absl::InvalidArgumentError(absl::StrCat("'", text.substr(0, 40), "' is not a fraction (0.05) or a percentage (5%)"));
  return percent ? v / 100 : v;
}

// RFC 3339 ("2026-11-30T12:00:00Z") or Unix milliseconds.
absl::StatusOr<int64_t> ParseTimeMs(absl::string_view text) {
  int64_t ms = 0;
  if (absl::SimpleAtoi(text, &ms)) return ms;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err))
    return absl::InvalidArgumentError(
        absl::StrCat("'", text.substr(0, 40), "' is neither RFC 3339 (2026-11-30T12:00:00Z) nor Unix milliseconds"));
  return absl::ToUnixMillis(t);
}

std::string ScopeText(const v1::SeriesScope& s) {
  std::string out = s.op();
  auto add = [&](absl::string_view name, const std::string& value) {
    if (!value.empty()) absl::StrAppend(&out, " ", name, "=", value);
  };
  add("variant", s.variant());
  add("shape", s.shape());
  add("dtype", s.dtype() == v1::DTYPE_UNSPECIFIED ? "" : api::DtypeName(s.dtype()));
  add("gpu", s.gpu_model());
  add("cache", s.cache_mode() == v1::CACHE_MODE_UNSPECIFIED ? "" : api::CacheModeName(s.cache_mode()));
  add("hot-batch", s.hot_batch() == 0 ? "" : absl::StrCat(s.hot_batch()));
  add("backend", s.backend() == v1::BACKEND_UNSPECIFIED ? "" : api::BackendName(s.backend()));
  return out;
}

std::string KindText(const v1::SeriesControl& c) {
  switch (c.kind()) {
    case v1::SERIES_THRESHOLD:
      return c.threshold() > 0 ? absl::StrCat("threshold ", c.threshold() * 100, "%") : "threshold cleared";
    case v1::SERIES_MUTE:
      return "mute";
    case v1::SERIES_UNMUTE:
      return "unmute";
    case v1::SERIES_STEP:
      return absl::StrCat("step at ",
                          absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(c.at_unix_ms()), absl::UTCTimeZone()));
    default:
      return "?";
  }
}

std::string ControlsText(const v1::ListSeriesControlsResponse& resp, Format format) {
  if (format == Format::kJson) {
    std::vector<const google::protobuf::Message*> messages;
    for (const auto& c : resp.controls()) messages.push_back(&c);
    return ToJsonArray(messages);
  }
  Table t;
  t.header = {"id", "control", "series", "by", "at (UTC)", "note"};
  t.numeric = {true, false, false, false, false, false};
  for (const auto& c : resp.controls())
    t.AddRow({absl::StrCat(c.id()), KindText(c), ScopeText(c.scope()), c.set_by().empty() ? "-" : c.set_by(),
              absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(c.set_unix_ms()), absl::UTCTimeZone()),
              format == Format::kCsv ? c.note() : Abbreviate(c.note(), 60)});
  return Render(t, format);
}

// The scope from the flags; a usage message on a bad value.
absl::StatusOr<v1::SeriesScope> ScopeOf(const ParsedArgs& args) {
  v1::SeriesScope s;
  s.set_op(args.Get("op"));
  s.set_variant(args.Get("variant"));
  s.set_shape(args.Get("shape"));  // the coordinator resolves it
  s.set_gpu_model(args.Get("gpu"));
  if (args.Has("dtype")) {
    auto d = api::ParseDtype(args.Get("dtype"));
    if (!d.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtype: ", d.status().message()));
    s.set_dtype(*d);
  }
  if (args.Has("cache")) {
    auto m = api::ParseCacheMode(args.Get("cache"));
    if (!m.ok()) return absl::InvalidArgumentError(absl::StrCat("--cache: ", m.status().message()));
    s.set_cache_mode(*m);
  }
  if (args.Has("hot-batch")) {
    auto b = args.GetInt("hot-batch", 0);
    if (!b.ok()) return b.status();
    if (*b < 1 || *b > 100000) return absl::InvalidArgumentError("--hot-batch: must be in [1, 100000]");
    s.set_hot_batch(static_cast<int32_t>(*b));
  }
  if (args.Has("backend")) {
    auto b = api::ParseBackend(args.Get("backend"));
    if (!b.ok()) return absl::InvalidArgumentError(absl::StrCat("--backend: ", b.status().message()));
    s.set_backend(*b);
  }
  return s;
}

}  // namespace

const CommandSpec& SeriesSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "series";
    s.positional = "mute|unmute|threshold|step|list";
    s.summary = "Admin controls of the regression series: mute, threshold override, known step; list them.";
    s.flags = {
        {"op", "OP", "The op of the series (required, except for list: then only this op's controls)"},
        {"variant", "VARIANT", "Only this variant (default: every variant of the op)"},
        {"shape", "SHAPE",
         "Only this shape, as submit takes it, e.g. 8192x4096 or 8192x32x8x128,gptj; dims the op derives may be left "
         "out (default: every shape)"},
        {"dtype", "DTYPE", "Only this dtype, e.g. bf16 (default: every dtype)"},
        {"gpu", "MODEL", "Only this exact device name, e.g. \"NVIDIA H200\" (default: every device)"},
        {"cache", "MODE", "Only cold or hot series (default: both)"},
        {"hot-batch", "N", "Only HOT series of this batch (default: every batch)"},
        {"backend", "NAME", "Only cuda or cpu (default: every backend)"},
        {"value", "FRACTION", "threshold: the new threshold, 0.05 or 5%; 0 clears the override"},
        {"at", "TIME", "step: when the step happened, RFC 3339 or Unix ms (default: now)"},
        {"note", "TEXT", "Why (recorded with the control)"},
        FormatFlagSpec(),
    };
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);
    s.details =
        "mute       verdicts of the series are still judged, stored and shown (history marks them muted),\n"
        "           but raise no alert (the kbench_series_regression gauge stays 0, history exits 0)\n"
        "           and start no confirming re-run\n"
        "unmute     ends a mute\n"
        "threshold  overrides the coordinator's --regression-threshold for the series (--value)\n"
        "step       a known step, e.g. a driver upgrade: the series' baseline and pinned reference restart\n"
        "           with the results finished after it (--at)\n"
        "list       the recorded controls, oldest first, with who (the token's name) and when\n"
        "The flags choose the series: --op alone covers every series of the op. Among the controls that\n"
        "cover a series, the latest of each kind decides.\n"
        "Changing a control needs a token with the admin role; list needs any token.\n"
        "Exit status: 0 ok; 1 the service failed; 2 bad flags, invalid request or permission denied.";
    s.examples = {
        "kbench-client series mute --op rmsnorm --variant v5_tma --gpu \"NVIDIA H200\" --note \"flaky node\"",
        "kbench-client series threshold --op gemm --value 5%",
        "kbench-client series step --op gemm --gpu \"NVIDIA H200\" --at 2026-11-30T12:00:00Z --note \"driver 565\"",
        "kbench-client series list --op rmsnorm",
    };
    return s;
  }();
  return spec;
}

int RunSeries(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = SeriesSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  if (args.positional.size() != 1) return UsageError(io, spec, "expected one action: mute, unmute, threshold, step or list");
  const std::string& action = args.positional[0];
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  auto scope = ScopeOf(args);
  if (!scope.ok()) return UsageError(io, spec, scope.status().message());

  v1::SeriesControl control;
  if (action == "list") {
    // Nothing to build.
  } else if (action == "mute") {
    control.set_kind(v1::SERIES_MUTE);
  } else if (action == "unmute") {
    control.set_kind(v1::SERIES_UNMUTE);
  } else if (action == "threshold") {
    control.set_kind(v1::SERIES_THRESHOLD);
    if (!args.Has("value")) return UsageError(io, spec, "threshold: --value is required (e.g. 5%; 0 clears)");
    auto v = ParseFraction(args.Get("value"));
    if (!v.ok()) return UsageError(io, spec, absl::StrCat("--value: ", v.status().message()));
    control.set_threshold(*v);
  } else if (action == "step") {
    control.set_kind(v1::SERIES_STEP);
    if (args.Has("at")) {
      auto at = ParseTimeMs(args.Get("at"));
      if (!at.ok()) return UsageError(io, spec, absl::StrCat("--at: ", at.status().message()));
      control.set_at_unix_ms(*at);
    }
  } else {
    return UsageError(io, spec, absl::StrCat("unknown action '", action.substr(0, 40),
                                             "' (mute, unmute, threshold, step or list)"));
  }
  if (action != "list" && scope->op().empty()) return UsageError(io, spec, "--op is required");
  if (args.Has("value") && action != "threshold") return UsageError(io, spec, "--value: only for threshold");
  if (args.Has("at") && action != "step") return UsageError(io, spec, "--at: only for step");
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());
  auto ctx = conn->Context();
  if (action == "list") {
    v1::ListSeriesControlsRequest req;
    req.set_op(scope->op());
    v1::ListSeriesControlsResponse resp;
    if (auto s = api::FromGrpc(conn->stub->ListSeriesControls(ctx.get(), req, &resp)); !s.ok())
      return CallError(io, "series", s, conn->options.address);
    io.out << ControlsText(resp, *format);
    return kExitOk;
  }
  *control.mutable_scope() = *std::move(scope);
  control.set_note(args.Get("note"));
  v1::SetSeriesControlRequest req;
  *req.mutable_control() = control;
  v1::SetSeriesControlResponse resp;
  if (auto s = api::FromGrpc(conn->stub->SetSeriesControl(ctx.get(), req, &resp)); !s.ok()) {
    // Permission denied is the caller's to fix (an admin token): a usage exit, not a service failure.
    if (absl::IsPermissionDenied(s)) {
      io.err << kProgram << ": series: " << s.message() << "\n";
      return kExitUsage;
    }
    return CallError(io, "series", s, conn->options.address);
  }
  v1::ListSeriesControlsResponse one;
  *one.add_controls() = resp.control();
  io.out << ControlsText(one, *format);
  return kExitOk;
}

}  // namespace kbench::client
