// Flags to JobSpec for `submit`; see job_spec.h.
#include "client/job_spec.h"

#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/names.h"
#include "api/shape.h"
#include "api/validate.h"
#include "client/custom_source.h"

namespace kbench::client {
namespace {

absl::Status FlagError(absl::string_view flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", message));
}

// A flag error from a helper whose message does not name the flag yet.
absl::Status Prefixed(absl::string_view flag, const absl::Status& s) { return FlagError(flag, s.message()); }

absl::StatusOr<int64_t> IntIn(const ParsedArgs& args, absl::string_view flag, int64_t lo, int64_t hi) {
  auto v = args.GetInt(flag, 0);
  if (!v.ok()) return v.status();
  if (*v < lo || *v > hi) return FlagError(flag, absl::StrCat("must be in [", lo, ", ", hi, "], got ", *v));
  return *v;
}

// Milliseconds on the command line (fractions allowed), nanoseconds in the spec.
absl::StatusOr<int64_t> MsToNs(const ParsedArgs& args, absl::string_view flag) {
  auto v = args.GetDouble(flag, 0);
  if (!v.ok()) return v.status();
  constexpr double kMaxMs = api::kMaxTimePerProblemNs / 1e6;
  if (*v < 0 || *v > kMaxMs) return FlagError(flag, absl::StrCat("must be in [0, ", kMaxMs, "] ms, got ", *v));
  return static_cast<int64_t>(std::llround(*v * 1e6));
}

// "90", "9.0" and "sm_90" all mean compute capability 9.0, stored as 90.
absl::StatusOr<int32_t> ParseComputeCapability(absl::string_view text) {
  absl::string_view t = text;
  absl::ConsumePrefix(&t, "sm_");
  absl::ConsumePrefix(&t, "sm");
  int major = 0, minor = 0;
  if (std::vector<absl::string_view> parts = absl::StrSplit(t, '.'); parts.size() == 2) {
    if (absl::SimpleAtoi(parts[0], &major) && absl::SimpleAtoi(parts[1], &minor) && major >= 0 && major < 100 &&
        minor >= 0 && minor < 10)
      return major * 10 + minor;
  } else if (int v = 0; absl::SimpleAtoi(t, &v) && v >= 0 && v < 1000) {
    return v;
  }
  return FlagError("min-cc", absl::StrCat("expected a compute capability like 90 or 9.0, got '", text, "'"));
}

absl::Status AddPairs(const ParsedArgs& args, absl::string_view flag,
                      google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& kv : args.GetAll(flag)) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return FlagError(flag, absl::StrCat("expected KEY=VALUE, got '", kv, "'"));
    std::string key = kv.substr(0, eq);
    if (out->count(key)) return FlagError(flag, absl::StrCat("key '", key, "' given twice"));
    (*out)[key] = kv.substr(eq + 1);
  }
  return absl::OkStatus();
}

absl::Status BuildSettings(const ParsedArgs& args, v1::MeasurementSettings* s) {
  if (args.Has("cache")) {
    auto mode = api::ParseCacheMode(args.Get("cache"));
    if (!mode.ok()) return Prefixed("cache", mode.status());
    s->set_cache_mode(*mode);
  }
  if (args.Has("noise")) {
    auto noise = args.GetDouble("noise", 0);
    if (!noise.ok()) return noise.status();
    if (*noise <= 0 || *noise >= 1)
      return FlagError("noise", absl::StrCat("must be in (0, 1), e.g. 0.005; got ", *noise));
    s->set_noise_target(*noise);
  }
  struct IntFlag {
    const char* flag;
    int64_t lo, hi;
    void (v1::MeasurementSettings::*set)(int32_t);
  };
  for (const IntFlag& f : {IntFlag{"min-samples", 1, api::kMaxSamples, &v1::MeasurementSettings::set_min_samples},
                           IntFlag{"max-samples", 1, api::kMaxSamples, &v1::MeasurementSettings::set_max_samples},
                           IntFlag{"trials", 1, 100, &v1::MeasurementSettings::set_correctness_trials},
                           IntFlag{"hot-batch", 1, 100000, &v1::MeasurementSettings::set_hot_batch}}) {
    if (!args.Has(f.flag)) continue;
    auto v = IntIn(args, f.flag, f.lo, f.hi);
    if (!v.ok()) return v.status();
    (s->*f.set)(static_cast<int32_t>(*v));
  }
  if (s->max_samples() > 0 && s->min_samples() > s->max_samples())
    return FlagError("min-samples", absl::StrCat(s->min_samples(), " is above --max-samples ", s->max_samples()));
  struct TimeFlag {
    const char* flag;
    void (v1::MeasurementSettings::*set)(int64_t);
  };
  for (const TimeFlag& f : {TimeFlag{"warmup-ms", &v1::MeasurementSettings::set_warmup_ns},
                            TimeFlag{"min-time-ms", &v1::MeasurementSettings::set_min_time_ns},
                            TimeFlag{"max-time-ms", &v1::MeasurementSettings::set_max_time_ns},
                            TimeFlag{"timeout-ms", &v1::MeasurementSettings::set_timeout_ns}}) {
    if (!args.Has(f.flag)) continue;
    auto v = MsToNs(args, f.flag);
    if (!v.ok()) return v.status();
    (s->*f.set)(*v);
  }
  if (s->max_time_ns() > 0 && s->min_time_ns() > s->max_time_ns())
    return FlagError("min-time-ms", "is above --max-time-ms");
  if (args.Has("seed")) {
    uint64_t seed = 0;
    if (!absl::SimpleAtoi(args.Get("seed"), &seed))
      return FlagError("seed", absl::StrCat("'", args.Get("seed"), "' is not a non-negative integer"));
    s->set_seed(seed);
  }
  return absl::OkStatus();
}

absl::Status BuildSelector(const ParsedArgs& args, v1::GpuSelector* sel) {
  if (args.Has("backend")) {
    auto b = api::ParseBackend(args.Get("backend"));
    if (!b.ok()) return Prefixed("backend", b.status());
    sel->set_backend(*b);
  }
  if (args.Has("gpu")) sel->set_model(args.Get("gpu"));
  if (args.Has("min-cc")) {
    auto cc = ParseComputeCapability(args.Get("min-cc"));
    if (!cc.ok()) return cc.status();
    sel->set_min_compute_capability(*cc);
  }
  return AddPairs(args, "selector-label", sel->mutable_labels());
}

absl::Status BuildProblems(const ParsedArgs& args, v1::JobSpec* spec) {
  std::set<std::string> seen;
  for (const auto& v : args.GetAll("variant")) {
    if (!seen.insert(v).second) return FlagError("variant", absl::StrCat("'", v, "' given twice"));
    spec->add_variants(v);
  }
  for (const auto& p : args.GetAll("preset")) spec->add_problems()->set_preset(p);
  for (const auto& text : args.GetAll("shape")) {
    auto shape = api::ParseShape(text);
    if (!shape.ok()) return Prefixed("shape", shape.status());
    for (const auto& d : shape->dims())
      // >= 1 but where the op allows 0 (paged_decode's long_context): the coordinator knows which.
      if (d.value() < 0) return FlagError("shape", absl::StrCat("'", text, "': every dimension must be >= 0"));
    *spec->add_problems()->mutable_shape() = *shape;
  }
  std::set<int> dtypes;
  for (const auto& name : args.GetAll("dtype")) {
    auto d = api::ParseDtype(name);
    if (!d.ok()) return Prefixed("dtype", d.status());
    if (dtypes.insert(*d).second) spec->add_dtypes(*d);
  }
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<v1::JobSpec> BuildJobSpec(const ParsedArgs& args, bool op_optional) {
  v1::JobSpec spec;
  const bool suite = args.Has("suite");
  if (suite) {
    if (args.Get("suite") != "default")
      return FlagError("suite", absl::StrCat("unknown suite '", args.Get("suite"), "' (known: default)"));
    for (const char* f : {"op", "variant", "preset", "shape"})
      if (args.Has(f)) return FlagError(f, "cannot be combined with --suite (the suite picks ops and problems)");
  } else if (!op_optional && (!args.Has("op") || args.Get("op").empty())) {
    return FlagError("op", "required (or --suite default)");
  }
  spec.set_op(args.Get("op"));
  if (auto s = BuildProblems(args, &spec); !s.ok()) return s;
  if (auto s = AddCustomSource(args, &spec); !s.ok()) return s;
  if (auto s = BuildSettings(args, spec.mutable_settings()); !s.ok()) return s;
  if (auto s = BuildSelector(args, spec.mutable_selector()); !s.ok()) return s;
  if (auto s = AddPairs(args, "label", spec.mutable_labels()); !s.ok()) return s;
  // The coordinator runs the same checks; running them here too saves a round trip.
  v1::JobSpec check = spec;
  if (suite) check.set_op("suite");
  if (op_optional && check.op().empty()) check.set_op("any");
  if (auto s = api::ValidateSpecStructure(check); !s.ok()) return s;
  return spec;
}

}  // namespace kbench::client
