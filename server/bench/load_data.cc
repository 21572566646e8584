// The synthetic catalog, jobs and results of kbench-load.
#include "server/bench/load_data.h"

#include "absl/strings/str_cat.h"
#include "api/validate.h"

namespace kbench::load {
namespace {

constexpr const char* kVariants[] = {"cpu_naive", "cpu_blocked", "cpu_vectorized", "cpu_threaded"};
constexpr int kVariantCount = 4;

v1::Problem Shape(int64_t rows, int64_t cols, v1::Dtype dtype) {
  v1::Problem p;
  v1::Dim* r = p.add_dims();
  r->set_name("rows");
  r->set_value(rows);
  v1::Dim* c = p.add_dims();
  c->set_name("cols");
  c->set_value(cols);
  p.set_dtype(dtype);
  return p;
}

}  // namespace

std::vector<v1::OpInfo> LoadCatalog(int ops) {
  std::vector<v1::OpInfo> catalog;
  for (int i = 0; i < ops; ++i) {
    v1::OpInfo& op = catalog.emplace_back();
    op.set_name(absl::StrCat("load_op_", i));
    op.set_description("A synthetic op of kbench-load: rows x cols, one weight per column, one output.");
    op.add_dims("rows");
    op.add_dims("cols");
    op.add_dtypes(v1::DTYPE_F32);
    op.add_dtypes(v1::DTYPE_BF16);
    op.set_max_dim_value(int64_t{1} << 31);
    for (auto [name, dims, out] : {std::tuple{"x", 2, false}, std::tuple{"w", 1, false}, std::tuple{"out", 2, true}}) {
      v1::TensorInfo* t = op.add_tensors();
      t->set_name(name);
      if (dims == 2) t->add_dims("rows");
      t->add_dims("cols");
      t->set_is_output(out);
    }
    for (int v = 0; v < kVariantCount; ++v) {
      v1::VariantInfo* var = op.add_variants();
      var->set_name(kVariants[v]);
      var->set_description(absl::StrCat("Rung ", v + 1, " of the ladder: what it teaches, in a sentence or two."));
      var->set_backend(v1::BACKEND_CPU);
      var->add_dtypes(v1::DTYPE_F32);
      var->add_dtypes(v1::DTYPE_BF16);
    }
    for (const char* preset : {"small", "edge", "canonical"}) {
      v1::PresetInfo* p = op.add_presets();
      p->set_name(preset);
      for (int64_t rows : {1, 769, 8192}) *p->add_problems() = Shape(rows, 4096, v1::DTYPE_UNSPECIFIED);
    }
  }
  return catalog;
}

v1::WorkerInfo LoadWorkerInfo(int i, const std::vector<v1::OpInfo>& catalog) {
  v1::WorkerInfo w;
  w.set_name(absl::StrCat("load-worker-", i));
  v1::DeviceInfo* d = w.add_devices();
  d->set_backend(v1::BACKEND_CPU);
  d->set_name("Load Generator Virtual CPU");
  d->set_uuid(absl::StrCat("cpu-load-", i));
  d->set_multiprocessor_count(2);
  d->set_memory_bytes(int64_t{64} << 30);
  d->set_l2_cache_bytes(int64_t{32} << 20);
  v1::Calibration* c = w.add_calibrations();
  c->set_device_uuid(d->uuid());
  c->set_copy_bytes_per_second(20e9);
  (*c->mutable_peak_flops_per_second())["f32"] = 100e9;
  c->set_method("kbench-load: not measured");
  for (const v1::OpInfo& op : catalog) *w.add_catalog() = op;
  (*w.mutable_labels())["pool"] = "load";
  w.set_suite_version("load");
  return w;
}

v1::JobSpec LoadJobSpec(int64_t n, int catalog_ops, int variants) {
  v1::JobSpec spec;
  spec.set_op(absl::StrCat("load_op_", n % catalog_ops));
  for (int v = 0; v < variants; ++v) spec.add_variants(kVariants[(n + v) % kVariantCount]);
  // Eight shapes per op: series come back often enough for their baselines to fill.
  *spec.add_problems()->mutable_shape() = Shape(64 * (1 + n % 8), 1024, v1::DTYPE_F32);
  spec.mutable_settings()->set_max_time_ns(200'000'000);
  (*spec.mutable_labels())["branch"] = n % 2 == 0 ? "main" : "load-test";
  (*spec.mutable_labels())["git_sha"] = absl::StrCat("load", n % 16);
  return spec;
}

std::vector<PlannedResult> PlanResults(const std::vector<v1::OpInfo>& catalog, const v1::JobSpec& spec) {
  std::vector<PlannedResult> out;
  for (const v1::OpInfo& op : catalog) {
    if (op.name() != spec.op()) continue;
    const std::vector<v1::Problem> problems = api::ExpandProblems(op, spec);
    for (const v1::VariantInfo* v : api::SelectVariants(op, spec))
      for (const v1::Problem& p : problems) out.push_back(PlannedResult{v->name(), p});
  }
  return out;
}

v1::Result LoadResult(const v1::Job& job, int index, const PlannedResult& planned, const v1::DeviceInfo& device,
                      int samples, std::mt19937_64& rng) {
  v1::Result r;
  r.set_job_id(job.job_id());
  r.set_index(index);
  r.set_op(job.spec().op());
  r.set_variant(planned.variant);
  *r.mutable_problem() = planned.problem;
  r.set_status(v1::OK);
  *r.mutable_device() = device;
  const double center = 1000.0 * static_cast<double>(planned.problem.dims(0).value());
  std::lognormal_distribution<double> noise(0.0, 0.01);
  v1::Timing* t = r.mutable_timing();
  for (int s = 0; s < samples; ++s) t->add_samples_ns(center * noise(rng));
  t->set_median_ns(center);
  t->set_count(samples);
  r.mutable_correctness()->set_passed(true);
  r.mutable_correctness()->set_trials(1);
  r.mutable_roofline()->add_ceilings()->set_utilization(0.5);
  return r;
}

}  // namespace kbench::load
