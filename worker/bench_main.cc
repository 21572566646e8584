// kbench-bench: the measurement harness without the services. Runs one op's variants on presets or
// shapes on this machine's device (CUDA when present, else the CPU) and prints a table; results go
// to a JSON-lines file when asked. For kernel development and for family READMEs' tables.
//   kbench-bench --op rmsnorm --preset canonical --dtype bf16 --json out.jsonl
#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/names.h"
#include "api/shape.h"
#include "api/validate.h"
#include "core/registry.h"
#include "google/protobuf/util/json_util.h"
#include "worker/help_flags.h"
#include "worker/calibration_cache.h"
#include "worker/plan/catalog.h"
#include "worker/cpu/cpu_backend.h"
#include "worker/runner/job_runner.h"
#ifdef KBENCH_HAVE_CUDA
#include "worker/cuda/cuda_backend.h"
#include "worker/cuda/device_query.h"
#endif

ABSL_FLAG(std::string, op, "", "Op to run (required), e.g. rmsnorm");
ABSL_FLAG(std::vector<std::string>, variant, {}, "Variants (comma-separated); default all");
ABSL_FLAG(std::vector<std::string>, preset, {}, "Presets (comma-separated); default small");
// A string, not a list: a list flag would split M=4096,N=4096,K=4096 at its commas.
ABSL_FLAG(std::string, shape, "",
          "Shapes, ';'-separated (',' separates one shape's dims and flags): rows=8192,cols=4096;8x16;8192x32x8x128,gptj; "
          "dims the op derives (w4a16_gemm's K_words, groups) may be left out");
ABSL_FLAG(std::vector<std::string>, dtype, {}, "Dtypes (comma-separated); default all the op has");
ABSL_FLAG(std::string, backend, "auto", "auto, cpu or cuda");
ABSL_FLAG(int, device, 0, "CUDA device ordinal");
ABSL_FLAG(std::string, cache, "cold", "cold or hot");
ABSL_FLAG(int, trials, 0, "Correctness trials (0: default 3)");
ABSL_FLAG(int, max_time_ms, 0, "Time limit per (variant, problem) (0: default)");
ABSL_FLAG(std::string, calibration_cache, "", "Calibration cache file (default per device in ~/.cache/kbench)");
ABSL_FLAG(bool, quick_calibration, false,
          "Shorter calibration: smaller memory streams and fewer repetitions (the compute ceilings time the same GEMMs)");
ABSL_FLAG(std::string, json, "", "Append every result as one JSON line to this file");
ABSL_FLAG(bool, check_only, false,
          "Only check the op, variants and shapes against every backend built in (no device, no memory limit), "
          "print the problems and exit: 0 valid, 2 not");

namespace kbench::worker {
namespace {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const std::string& kind) {
  const bool quick = absl::GetFlag(FLAGS_quick_calibration);
#ifdef KBENCH_HAVE_CUDA
  if (kind == "cuda" || (kind == "auto" && CudaDeviceCount() > 0)) {
    auto b = CudaBackend::Create(absl::GetFlag(FLAGS_device), CudaCalibrationOptions{.quick = quick});
    if (!b.ok()) return b.status();
    return std::unique_ptr<Backend>(std::move(*b));
  }
#endif
  if (kind == "cpu" || kind == "auto")
    return std::unique_ptr<Backend>(new CpuBackend(CpuBackendOptions{.quick_calibration = quick}));
  return absl::InvalidArgumentError("--backend: " + kind + " is not built into this binary");
}

absl::StatusOr<v1::JobSpec> SpecFromFlags() {
  v1::JobSpec spec;
  spec.set_op(absl::GetFlag(FLAGS_op));
  for (const auto& v : absl::GetFlag(FLAGS_variant)) spec.add_variants(v);
  for (const auto& p : absl::GetFlag(FLAGS_preset)) spec.add_problems()->set_preset(p);
  if (const std::string shapes = absl::GetFlag(FLAGS_shape); !shapes.empty()) {
    auto parsed = api::ParseShapeList(shapes);
    if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat("--shape: ", parsed.status().message()));
    for (const v1::Problem& shape : *parsed) *spec.add_problems()->mutable_shape() = shape;
  }
  for (const auto& d : absl::GetFlag(FLAGS_dtype)) {
    auto dt = api::ParseDtype(d);
    if (!dt.ok()) return dt.status();
    spec.add_dtypes(*dt);
  }
  auto cache = api::ParseCacheMode(absl::GetFlag(FLAGS_cache));
  if (!cache.ok()) return cache.status();
  spec.mutable_settings()->set_cache_mode(*cache);
  spec.mutable_settings()->set_correctness_trials(absl::GetFlag(FLAGS_trials));
  spec.mutable_settings()->set_max_time_ns(int64_t{absl::GetFlag(FLAGS_max_time_ms)} * 1'000'000);
  return spec;
}

// The checks the job runner makes once the device is calibrated: the spec's structure, then the op,
// variants, shapes (derived dims filled in) and memory (none when dev has no memory size) against the
// catalog. Returns the resolved spec.
absl::StatusOr<v1::JobSpec> ResolveSpec(const Catalog& catalog, const v1::DeviceInfo& dev, v1::JobSpec spec) {
  if (absl::Status s = api::ValidateSpecStructure(spec); !s.ok()) return s;
  const v1::OpInfo* info = catalog.FindInfo(spec.op());
  if (info == nullptr) {
    std::string known;
    for (const v1::OpInfo& op : catalog.ops()) absl::StrAppend(&known, known.empty() ? "" : ", ", op.name());
    return absl::InvalidArgumentError(absl::StrCat("unknown op '", spec.op(), "' (known: ", known, ")"));
  }
  if (absl::Status s = api::ResolveAgainstOp(*info, dev.memory_bytes(), &spec); !s.ok()) return s;
  return spec;
}

double Fraction(const v1::Roofline& r, const std::string& source) {
  for (const auto& c : r.ceilings())
    if (c.source() == source) return std::max(c.bandwidth_fraction(), c.flops_fraction());
  return 0;
}

int Main() {
  if (absl::GetFlag(FLAGS_op).empty()) {
    std::cerr << "kbench-bench: --op is required (see --help)\n";
    return 2;
  }
  auto spec = SpecFromFlags();
  if (!spec.ok()) {
    std::cerr << "kbench-bench: " << spec.status().message() << "\n";
    return 2;
  }
  if (absl::GetFlag(FLAGS_check_only)) {
    const Catalog all(kernels::BuiltinRegistry(), {kernels::Backend::kCpu, kernels::Backend::kCuda});
    absl::StatusOr<v1::JobSpec> resolved = ResolveSpec(all, v1::DeviceInfo(), *spec);
    if (!resolved.ok()) {
      std::cerr << "kbench-bench: " << resolved.status().message() << "\n";
      return 2;
    }
    const v1::OpInfo& info = *all.FindInfo(resolved->op());
    for (const v1::Problem& p : api::ExpandProblems(info, *resolved)) std::printf("%s\n", api::ProblemLabel(p).c_str());
    return 0;
  }
  auto backend = MakeBackend(absl::GetFlag(FLAGS_backend));
  if (!backend.ok()) {
    std::cerr << "kbench-bench: " << backend.status().message() << "\n";
    return 1;
  }
  const v1::DeviceInfo dev = (*backend)->device();
  Catalog catalog(kernels::BuiltinRegistry(), {(*backend)->kind()});
  // A bad request is refused before the calibration (seconds, or minutes on a GPU), not after it.
  if (absl::StatusOr<v1::JobSpec> resolved = ResolveSpec(catalog, dev, *spec); !resolved.ok()) {
    std::cerr << "kbench-bench: " << resolved.status().message() << "\n";
    return 2;
  }
  std::cerr << "device: " << dev.name() << "; calibrating (or reading the cache)...\n";
  auto cal = LoadOrCalibrate(**backend, {.path = absl::GetFlag(FLAGS_calibration_cache),
                                         .quick = absl::GetFlag(FLAGS_quick_calibration)});
  if (!cal.ok()) {
    std::cerr << "kbench-bench: calibration failed: " << cal.status().message() << "\n";
    return 1;
  }
  for (const std::string& refusal : cal->refusals) std::cerr << "calibration refused, " << refusal << "\n";
  if (!cal->calibration.warning().empty()) std::cerr << "WARNING: " << cal->calibration.warning() << "\n";
  const v1::Calibration& c = cal->calibration;
  std::printf("device %s  calibrated copy %.0f GB/s", dev.name().c_str(), c.copy_bytes_per_second() / 1e9);
  for (const auto& [k, v] : c.peak_flops_per_second()) std::printf("  %s %.1f TFLOP/s", k.c_str(), v / 1e12);
  std::printf("\nceilings: read-only %.0f, write-only %.0f, 1:1 %.0f, 2:1 %.0f, L2 read %.0f GB/s; f32 FMA %.1f TFLOP/s, "
              "SFU exp2 %.2f T/s\n",
              c.read_bytes_per_second() / 1e9, c.write_bytes_per_second() / 1e9,
              c.read_write_bytes_per_second() / 1e9, c.read2_write1_bytes_per_second() / 1e9,
              c.l2_read_bytes_per_second() / 1e9, c.fma_f32_flops_per_second() / 1e12, c.sfu_ops_per_second() / 1e12);

  JobRunner runner(catalog, **backend);
  std::ofstream json;
  if (!absl::GetFlag(FLAGS_json).empty()) json.open(absl::GetFlag(FLAGS_json), std::ios::app);
  std::printf("%-22s %-16s %-5s %-10s %12s %10s %10s %8s %8s %-8s %-24s %s\n", "variant", "shape", "dtype", "status",
              "median_us", "GB/s", "TFLOP/s", "%ceil", "%sheet", "class", "ceiling", "check");
  int bad = 0;
  CancelFlag never;
  absl::Status s = runner.Run(*spec, {.job_id = "bench"}, never, [&](const v1::RunJobEvent& ev) {
    if (!ev.has_result()) return;
    const v1::Result& r = ev.result();
    const auto& rf = r.roofline();
    const std::string ceiling = rf.ceilings_size() == 0                  ? ""
                                : rf.bound_class() == v1::COMPUTE_BOUND ? rf.ceilings(0).peak_ceiling()
                                                                        : rf.ceilings(0).bandwidth_ceiling();
    const std::string shape = api::ShapeArgument(r.problem());  // with its flags: 8192x32x8x128,gptj
    std::printf("%-22s %-16s %-5s %-10s %12.2f %10.1f %10.2f %8.1f %8.1f %-8s %-24s %s\n", r.variant().c_str(),
                shape.c_str(), api::DtypeName(r.problem().dtype()).c_str(),
                api::StatusName(r.status()).c_str(), r.timing().median_ns() / 1e3, rf.achieved_bytes_per_second() / 1e9,
                rf.achieved_flops_per_second() / 1e12, 100 * Fraction(rf, "calibrated"), 100 * Fraction(rf, "datasheet"),
                api::BoundClassName(rf.bound_class()).c_str(), ceiling.c_str(),
                r.status() == v1::OK ? "ok" : r.status_message().substr(0, 60).c_str());
    std::fflush(stdout);
    if (r.status() != v1::OK && r.status() != v1::SKIPPED) ++bad;
    if (json.is_open()) {
      std::string line;
      google::protobuf::util::JsonPrintOptions o;
      o.preserve_proto_field_names = true;  // the same keys as kbench-client's JSON
      (void)google::protobuf::util::MessageToJsonString(r, &line, o);
      json << line << "\n";
    }
  });
  if (!s.ok()) {
    std::cerr << "kbench-bench: " << s.message() << "\n";
    return 2;
  }
  return bad ? 1 : 0;
}

}  // namespace
}  // namespace kbench::worker

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs one op's variants on this machine's device and prints a table.\n"
      "  kbench-bench --op rmsnorm --preset canonical --dtype bf16 [--cache hot] [--json out.jsonl]");
  kbench::worker::HelpListsFlagsOf("worker/bench_main.cc");
  absl::ParseCommandLine(argc, argv);
  return kbench::worker::Main();
}
