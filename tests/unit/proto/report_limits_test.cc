// The limits of what a worker sends (worker.proto, device.proto, catalog.proto, result.proto, job.proto
// Progress): at the limit accepted, one past it refused naming the field with a short message;
// non-finite numbers, negative sizes and undeclared enum values refused; long free text cut.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "api/message_bounds.h"
#include "gtest/gtest.h"

namespace kbench::api {
namespace {

v1::OpInfo SmallOp() {
  v1::OpInfo op;
  op.set_name("rmsnorm");
  op.add_dims("rows");
  op.add_dtypes(v1::DTYPE_F32);
  op.add_variants()->set_name("cpu_naive");
  v1::PresetInfo* p = op.add_presets();
  p->set_name("small");
  v1::Dim* d = p->add_problems()->add_dims();
  d->set_name("rows");
  d->set_value(64);
  return op;
}

v1::WorkerInfo BaseWorker() {
  v1::WorkerInfo w;
  w.set_name("node");
  v1::DeviceInfo* d = w.add_devices();
  d->set_backend(v1::BACKEND_CPU);
  d->set_name("cpu");
  d->set_memory_bytes(1 << 30);
  *w.add_catalog() = SmallOp();
  return w;
}

v1::Result BaseResult() {
  v1::Result r;
  r.set_op("rmsnorm");
  r.set_variant("cpu_naive");
  r.set_status(v1::OK);
  for (int i = 0; i < 5; ++i) r.mutable_timing()->add_samples_ns(1000 + i);
  r.mutable_timing()->set_median_ns(1002);
  return r;
}

template <typename Msg>
struct Limit {
  std::string field;
  int64_t limit;
  std::function<void(Msg*, int64_t n)> fill;
};

template <typename Msg>
void ExpectLimits(const std::vector<Limit<Msg>>& limits, const Msg& base,
                  const std::function<absl::Status(const Msg&)>& check) {
  for (const Limit<Msg>& l : limits) {
    SCOPED_TRACE(l.field);
    Msg at = base;
    l.fill(&at, l.limit);
    absl::Status ok = check(at);
    EXPECT_TRUE(ok.ok()) << ok;
    Msg over = base;
    l.fill(&over, l.limit + 1);
    absl::Status refused = check(over);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
    EXPECT_TRUE(absl::StartsWith(refused.message(), l.field)) << refused.message();
    EXPECT_LT(refused.message().size(), 400u) << refused.message();
  }
}

std::string S(int64_t n, char c = 'x') { return std::string(static_cast<size_t>(n), c); }

TEST(WorkerLimits, EachLimitAcceptsItsValueAndRefusesOneMore) {
  using W = v1::WorkerInfo;
  const std::vector<Limit<W>> limits = {
      {"info.worker_id", kMaxIdBytes, [](W* w, int64_t n) { w->set_worker_id(S(n)); }},
      {"info.name", kMaxShortTextBytes, [](W* w, int64_t n) { w->set_name(S(n)); }},
      {"info.address", kMaxShortTextBytes, [](W* w, int64_t n) { w->set_address(S(n)); }},
      {"info.suite_version", kMaxShortTextBytes, [](W* w, int64_t n) { w->set_suite_version(S(n)); }},
      {"info.devices", kMaxDevicesPerWorker,
       [](W* w, int64_t n) { for (int64_t i = 1; i < n; ++i) *w->add_devices() = w->devices(0); }},
      {"info.devices[0].name", kMaxShortTextBytes, [](W* w, int64_t n) { w->mutable_devices(0)->set_name(S(n)); }},
      {"info.devices[0].uuid", kMaxIdBytes, [](W* w, int64_t n) { w->mutable_devices(0)->set_uuid(S(n)); }},
      {"info.calibrations", kMaxDevicesPerWorker,
       [](W* w, int64_t n) { for (int64_t i = 0; i < n; ++i) w->add_calibrations(); }},
      {"info.calibrations[0].peak_flops_per_second", kMaxCalibrationPeaks,
       [](W* w, int64_t n) {
         auto* c = w->add_calibrations();
         for (int64_t i = 0; i < n; ++i) (*c->mutable_peak_flops_per_second())[absl::StrCat("d", i)] = 1e12;
       }},
      {"info.calibrations[0].method", kMaxTextBytes, [](W* w, int64_t n) { w->add_calibrations()->set_method(S(n)); }},
      {"info.catalog", kMaxCatalogOps,
       [](W* w, int64_t n) {
         w->clear_catalog();
         for (int64_t i = 0; i < n; ++i) w->add_catalog()->set_name(absl::StrCat("op", i));
       }},
      {"info.catalog[0].name", kMaxNameBytes, [](W* w, int64_t n) { w->mutable_catalog(0)->set_name(S(n)); }},
      {"info.catalog[0].description", kMaxTextBytes,
       [](W* w, int64_t n) { w->mutable_catalog(0)->set_description(S(n)); }},
      {"info.catalog[0].variants", kMaxVariantsPerOp,
       [](W* w, int64_t n) {
         for (int64_t i = 1; i < n; ++i) w->mutable_catalog(0)->add_variants()->set_name(absl::StrCat("v", i));
       }},
      {"info.catalog[0].variants[0].description", kMaxTextBytes,
       [](W* w, int64_t n) { w->mutable_catalog(0)->mutable_variants(0)->set_description(S(n)); }},
      {"info.catalog[0].presets", kMaxPresetsPerOp,
       [](W* w, int64_t n) {
         for (int64_t i = 1; i < n; ++i) w->mutable_catalog(0)->add_presets()->set_name(absl::StrCat("p", i));
       }},
      {"info.catalog[0].presets[0].problems", kMaxProblemsPerPreset,
       [](W* w, int64_t n) {
         auto* p = w->mutable_catalog(0)->mutable_presets(0);
         for (int64_t i = 1; i < n; ++i) *p->add_problems() = p->problems(0);
       }},
      {"info.catalog[0].tensors", kMaxTensorsPerOp,
       [](W* w, int64_t n) { for (int64_t i = 0; i < n; ++i) w->mutable_catalog(0)->add_tensors()->set_name("t"); }},
      {"info.catalog[0].flags", kMaxFlagsPerOp,
       [](W* w, int64_t n) { for (int64_t i = 0; i < n; ++i) w->mutable_catalog(0)->add_flags("causal"); }},
      {"info.catalog[0].derived_dims", kMaxDimsPerProblem,
       [](W* w, int64_t n) {
         for (int64_t i = 0; i < n; ++i) {
           auto* d = w->mutable_catalog(0)->add_derived_dims();
           d->set_name(absl::StrCat("d", i));
           d->set_expr("cdiv(K, 128)");
         }
       }},
      {"info.catalog[0].derived_dims[0].expr", kMaxGridExprBytes,
       [](W* w, int64_t n) {
         auto* d = w->mutable_catalog(0)->add_derived_dims();
         d->set_name("d");
         d->set_expr(S(n));
       }},
      {"info.catalog[0].zero_dims", kMaxDimsPerProblem,
       [](W* w, int64_t n) { for (int64_t i = 0; i < n; ++i) w->mutable_catalog(0)->add_zero_dims("z"); }},
      {"info.catalog[0].contract.template_source", kMaxTemplateSourceBytes,
       [](W* w, int64_t n) { w->mutable_catalog(0)->mutable_contract()->set_template_source(S(n)); }},
      {"info.catalog[0].contract.params", kMaxContractParams,
       [](W* w, int64_t n) { for (int64_t i = 0; i < n; ++i) w->mutable_catalog(0)->mutable_contract()->add_params(); }},
      {"info.labels", kMaxLabels,
       [](W* w, int64_t n) { for (int64_t i = 0; i < n; ++i) (*w->mutable_labels())[absl::StrCat("k", i)] = "v"; }},
      {"info.labels[\"zone\"]", kMaxLabelValueBytes, [](W* w, int64_t n) { (*w->mutable_labels())["zone"] = S(n); }},
  };
  ExpectLimits<W>(limits, BaseWorker(), [](const W& w) { return CheckWorkerInfoBounds("info", w); });
}

TEST(WorkerLimits, TheWholeRegistrationIsBounded) {
  v1::WorkerInfo w = BaseWorker();
  for (int i = 0; i < 40; ++i) w.add_catalog()->mutable_contract()->set_template_source(S(kMaxTemplateSourceBytes));
  absl::Status s = CheckWorkerInfoBounds("info", w);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "info: ")) << s.message();
  EXPECT_TRUE(absl::StrContains(s.message(), absl::StrCat("limit of ", kMaxWorkerInfoBytes))) << s.message();
}

TEST(WorkerLimits, NonsenseNumbersAndEnumsAreRefused) {
  struct Case {
    std::string field;
    std::function<void(v1::WorkerInfo*)> set;
  };
  for (const Case& c : std::vector<Case>{
           {"info.devices", [](v1::WorkerInfo* w) { w->clear_devices(); }},
           {"info.devices[0].memory_bytes", [](v1::WorkerInfo* w) { w->mutable_devices(0)->set_memory_bytes(-1); }},
           {"info.devices[0].backend",
            [](v1::WorkerInfo* w) { w->mutable_devices(0)->set_backend(static_cast<v1::Backend>(5)); }},
           {"info.calibrations[0].copy_bytes_per_second",
            [](v1::WorkerInfo* w) { w->add_calibrations()->set_copy_bytes_per_second(std::nan("")); }},
           {"info.catalog[0].dtypes[1]",
            [](v1::WorkerInfo* w) { w->mutable_catalog(0)->add_dtypes(static_cast<v1::Dtype>(77)); }},
           {"info.catalog[0].variants[0].name", [](v1::WorkerInfo* w) { w->mutable_catalog(0)->mutable_variants(0)->clear_name(); }},
       }) {
    v1::WorkerInfo w = BaseWorker();
    c.set(&w);
    absl::Status s = CheckWorkerInfoBounds("info", w);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StartsWith(s.message(), c.field)) << s.message();
  }
}

TEST(ResultLimits, EachLimitAcceptsItsValueAndRefusesOneMore) {
  using R = v1::Result;
  const std::vector<Limit<R>> limits = {
      {"results[0].job_id", kMaxIdBytes, [](R* r, int64_t n) { r->set_job_id(S(n)); }},
      {"results[0].op", kMaxNameBytes, [](R* r, int64_t n) { r->set_op(S(n)); }},
      {"results[0].variant", kMaxNameBytes, [](R* r, int64_t n) { r->set_variant(S(n)); }},
      {"results[0].index", kMaxResultsPerJob - 1, [](R* r, int64_t n) { r->set_index(static_cast<int32_t>(n)); }},
      {"results[0].problem.dims", kMaxDimsPerProblem,
       [](R* r, int64_t n) { for (int64_t i = 0; i < n; ++i) r->mutable_problem()->add_dims()->set_value(1); }},
      {"results[0].problem.flags[0]", kMaxNameBytes, [](R* r, int64_t n) { r->mutable_problem()->add_flags(S(n)); }},
      {"results[0].timing.samples_ns", kMaxSamples,
       [](R* r, int64_t n) {
         auto* t = r->mutable_timing();
         t->clear_samples_ns();
         t->mutable_samples_ns()->Resize(static_cast<int>(n), 1000.0);
       }},
      {"results[0].timing.block_sample_counts", kMaxSamples,
       [](R* r, int64_t n) { r->mutable_timing()->mutable_block_sample_counts()->Resize(static_cast<int>(n), 1); }},
      {"results[0].roofline.ceilings", kMaxCeilingsPerResult,
       [](R* r, int64_t n) { for (int64_t i = 0; i < n; ++i) r->mutable_roofline()->add_ceilings()->set_source("calibrated"); }},
      {"results[0].resources", kMaxResourcesPerResult,
       [](R* r, int64_t n) { for (int64_t i = 0; i < n; ++i) r->add_resources()->set_kernel_name("k"); }},
      {"results[0].resources[0].kernel_name", kMaxShortTextBytes,
       [](R* r, int64_t n) { r->add_resources()->set_kernel_name(S(n)); }},
      {"results[0].correctness.reference", kMaxShortTextBytes,
       [](R* r, int64_t n) { r->mutable_correctness()->set_reference(S(n)); }},
      {"results[0].device.name", kMaxShortTextBytes, [](R* r, int64_t n) { r->mutable_device()->set_name(S(n)); }},
      {"results[0].labels", kMaxLabels,
       [](R* r, int64_t n) { for (int64_t i = 0; i < n; ++i) (*r->mutable_labels())[absl::StrCat("k", i)] = "v"; }},
      {"results[0].custom.compiler", kMaxShortTextBytes, [](R* r, int64_t n) { r->mutable_custom()->set_compiler(S(n)); }},
  };
  ExpectLimits<R>(limits, BaseResult(), [](const R& r) { return CheckResultBounds("results[0]", r); });
}

TEST(ResultLimits, NonsenseNumbersAndEnumsAreRefused) {
  struct Case {
    std::string field;
    std::function<void(v1::Result*)> set;
  };
  for (const Case& c : std::vector<Case>{
           {"results[0].index", [](v1::Result* r) { r->set_index(-1); }},
           {"results[0].timing.samples_ns[2]", [](v1::Result* r) { r->mutable_timing()->set_samples_ns(2, std::nan("")); }},
           {"results[0].timing.samples_ns[0]", [](v1::Result* r) { r->mutable_timing()->set_samples_ns(0, -5); }},
           {"results[0].timing.median_ns", [](v1::Result* r) { r->mutable_timing()->set_median_ns(HUGE_VAL); }},
           {"results[0].timing.block_sample_counts[1]",
            [](v1::Result* r) {
              r->mutable_timing()->add_block_sample_counts(3);
              r->mutable_timing()->add_block_sample_counts(-1);
            }},
           {"results[0].timing.cache_mode",
            [](v1::Result* r) { r->mutable_timing()->set_cache_mode(static_cast<v1::CacheMode>(3)); }},
           {"results[0].status", [](v1::Result* r) { r->set_status(static_cast<v1::ResultStatus>(40)); }},
           {"results[0].ab_side", [](v1::Result* r) { r->set_ab_side(static_cast<v1::AbSide>(4)); }},
           {"results[0].plugin_sha256", [](v1::Result* r) { r->set_plugin_sha256("not-a-hash"); }},
           {"results[0].op", [](v1::Result* r) { r->clear_op(); }},
       }) {
    v1::Result r = BaseResult();
    c.set(&r);
    absl::Status s = CheckResultBounds("results[0]", r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StartsWith(s.message(), c.field)) << s.message();
  }
}

TEST(ResultLimits, LongFreeTextIsCutNotRefused) {
  v1::Result r = BaseResult();
  r.set_status_message(S(10 << 20));
  r.mutable_custom()->set_compile_log(S(kMaxLogBytes + 1));
  EXPECT_TRUE(CheckResultBounds("results[0]", r).ok());
  CutResultText(&r);
  EXPECT_LE(r.status_message().size(), kMaxLogBytes);
  EXPECT_TRUE(absl::EndsWith(r.status_message(), "(10485760 bytes in all)"));
  EXPECT_LE(r.custom().compile_log().size(), kMaxLogBytes);
  v1::Result kept = BaseResult();
  kept.set_status_message(S(kMaxLogBytes));
  CutResultText(&kept);
  EXPECT_EQ(kept.status_message(), S(kMaxLogBytes));
}

TEST(ProgressLimits, DoneNeverPassesTheTotal) {
  v1::Progress p;
  p.set_results_total(1);
  p.set_results_done(1);
  EXPECT_TRUE(CheckProgressBounds("progress", p).ok());
  p.set_results_done(50);
  absl::Status s = CheckProgressBounds("progress", p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "progress.results_done: 50 is more than results_total (1)");
  p.set_results_done(-1);
  EXPECT_TRUE(absl::StartsWith(CheckProgressBounds("progress", p).message(), "progress.results_done"));
  p.set_results_done(0);
  p.set_results_total(kMaxResultsPerJob + 1);
  EXPECT_TRUE(absl::StartsWith(CheckProgressBounds("progress", p).message(), "progress.results_total"));
  p.set_results_total(kMaxResultsPerJob);
  EXPECT_TRUE(CheckProgressBounds("progress", p).ok());
}

TEST(ProgressLimits, LongCurrentIsCut) {
  v1::Progress p;
  p.set_current(S(kMaxTextBytes + 1));
  CutProgressText(&p);
  EXPECT_LE(p.current().size(), kMaxTextBytes);
}

}  // namespace
}  // namespace kbench::api
