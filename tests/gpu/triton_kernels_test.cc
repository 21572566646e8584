// Triton kernels end to end on a GPU (worker/triton/), through the job runner and a real
// kbench-runner child: every triton_* rung of the suite checked against the reference on the small
// and edge presets in each dtype it implements (the GEMM autotuned in bf16, its choice reported;
// attention also on one canonical shape, its d = 256 problem SKIPPED with the reason), a user's Triton
// rmsnorm from source (the second shape of its class a cache hit, no compile time), a compile error
// as COMPILE_ERROR with Triton's message, and isolation: an out-of-bounds store costs one result
// (RUNTIME_ERROR), a hang one TIMEOUT, and the next item still runs OK. Needs Triton on the node
// ($KBENCH_PYTHON or python3 on PATH); a node without it fails here (the capability must be present
// where this runs), while the CPU tests cover its absence. The runner is found as custom_gpu_test does.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "api/names.h"
#include "api/shape.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gtest/gtest.h"
#include "worker/isolation/child_env.h"
#include "worker/isolation/isolated_backend.h"
#include "worker/plan/catalog.h"
#include "worker/runner/convert.h"
#include "worker/runner/job_runner.h"
#include "worker/triton/triton_compiler.h"

namespace kbench::worker {
namespace {

std::string RunnerPath() {
  if (const char* p = std::getenv("KBENCH_RUNNER"); p && *p) return p;
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& candidate : {self / "kbench-runner", self / ".." / "bin" / "kbench-runner"})
    if (std::filesystem::exists(candidate)) return candidate.string();
  return "";
}

constexpr char kRmsnorm[] = R"PY(import triton
import triton.language as tl

@triton.jit
def my_rmsnorm(x, weight, out, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / cols + 1e-6)
    w = tl.load(weight + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * cols + offs, (v * rstd * w).to(out.dtype.element_ty), mask=mask)

kbench_launch = {"kernel": "my_rmsnorm", "grid": ["rows"], "constexprs": {"BLOCK": "next_pow2(cols)"},
                 "num_warps": 4, "num_stages": 1}
)PY";

// vector_add kernels that misbehave on purpose.
constexpr char kOutOfBounds[] = R"PY(import triton
import triton.language as tl

@triton.jit
def oob(x, y, out, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK) + (1 << 40)
    tl.store(out + offs, tl.load(x + offs))

kbench_launch = {"kernel": "oob", "grid": ["cdiv(N, BLOCK)"], "constexprs": {"BLOCK": 1024}}
)PY";

constexpr char kHang[] = R"PY(import triton
import triton.language as tl

@triton.jit
def hang(x, y, out, N, BLOCK: tl.constexpr):
    v = tl.load(x, volatile=True)
    while v == v:  # the inputs are finite: never false; volatile loads keep the loop
        v = tl.load(x, volatile=True)
    tl.store(out + tl.arange(0, BLOCK), tl.zeros([BLOCK], dtype=tl.float32).to(out.dtype.element_ty))

kbench_launch = {"kernel": "hang", "grid": ["1"], "constexprs": {"BLOCK": 128}}
)PY";

class TritonGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KBENCH_REQUIRE_GPU_OR_SKIP();
    const std::string runner = RunnerPath();
    ASSERT_FALSE(runner.empty()) << "kbench-runner not found beside the test (set KBENCH_RUNNER)";
    cache_dir_ = MakePrivateDir("triton-gpu-cache");
    setenv("KBENCH_KERNEL_CACHE", cache_dir_.c_str(), 1);  // a fresh cache: first compiles are first
    auto backend = IsolatedBackend::Create({.runner_path = runner,
                                            .backend = "cuda",
                                            .device = 0,
                                            .log_path = "/tmp/kbench-triton-gpu-test-runner.log",
                                            .quick_calibration = true},
                                           kernels::Backend::kCuda);
    ASSERT_TRUE(backend.ok()) << "the CUDA runner did not start: " << backend.status();
    backend_ = std::move(*backend);
    catalog_ = std::make_unique<Catalog>(kernels::BuiltinRegistry(), std::set<kernels::Backend>{kernels::Backend::kCuda});
    runner_ = std::make_unique<JobRunner>(*catalog_, *backend_);
  }
  void TearDown() override {
    runner_.reset();
    backend_.reset();
    if (!cache_dir_.empty()) RemovePrivateDir(cache_dir_);
  }

  static v1::JobSpec Spec(const std::string& op, const std::vector<std::string>& shapes, const std::vector<v1::Dtype>& dtypes) {
    v1::JobSpec spec;
    spec.set_op(op);
    for (const auto& s : shapes) *spec.add_problems()->mutable_shape() = *api::ParseShape(s);
    for (v1::Dtype d : dtypes) spec.add_dtypes(d);
    auto* s = spec.mutable_settings();
    s->set_warmup_ns(5'000'000);
    s->set_min_time_ns(10'000'000);
    s->set_max_time_ns(100'000'000);
    s->set_correctness_trials(2);
    s->set_timeout_ns(5'000'000'000);
    return spec;
  }

  std::vector<v1::Result> Run(const v1::JobSpec& spec) {
    std::vector<v1::Result> results;
    const absl::Status s = runner_->Run(spec, {.job_id = "j", .worker_id = "w", .attempt = 1}, {},
                                        [&](const v1::RunJobEvent& e) {
                                          if (e.has_result()) results.push_back(e.result());
                                        });
    EXPECT_TRUE(s.ok()) << s;
    return results;
  }

  static v1::CustomVariant Triton(const std::string& name, const std::string& source) {
    v1::CustomVariant c;
    c.set_name(name);
    c.set_kind(v1::TRITON_SOURCE);
    c.set_source(source);
    c.set_file_name(name + ".py");
    return c;
  }

  std::string cache_dir_;
  std::unique_ptr<IsolatedBackend> backend_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<JobRunner> runner_;
};

// Every Triton rung of the suite, one test each (TritonRungGpuTest.IsCorrect/triton_attention).
std::vector<std::string> SuiteTritonRungs() {
  std::vector<std::string> names;
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops())
    for (const kernels::Variant& v : op.variants)
      if (!v.triton_source.empty()) names.push_back(v.name);
  return names;
}

class TritonRungGpuTest : public TritonGpuTest, public ::testing::WithParamInterface<std::string> {
 protected:
  const kernels::OpDef& op() const {
    for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops())
      if (op.find_variant(GetParam())) return op;
    std::abort();
  }
  // Each result OK and checked against the reference, or SKIPPED for what the rung's description
  // leaves out (attention's d = 256); the number of each.
  static std::pair<int, int> Check(const std::vector<v1::Result>& results, const std::string& op) {
    int ok = 0, skipped = 0;
    for (const v1::Result& r : results) {
      SCOPED_TRACE(r.variant() + " " + api::ProblemLabel(r.problem()) + " " + v1::Dtype_Name(r.problem().dtype()));
      if (op == "attention" && r.status() == v1::SKIPPED) {
        EXPECT_EQ(r.status_message(), "triton_attention does not implement d = 256 (implemented: 64, 128)");
        ++skipped;
        continue;
      }
      EXPECT_EQ(r.status(), v1::OK) << r.status_message();
      EXPECT_TRUE(r.correctness().passed());
      EXPECT_EQ(r.custom().kind(), v1::TRITON_SOURCE);
      EXPECT_NE(r.custom().compiler().find("triton "), std::string::npos);
      EXPECT_FALSE(r.custom().triton_config().empty());
      if (op == "gemm" && !r.custom().triton_autotune().empty())
        EXPECT_EQ(r.custom().triton_autotune_size(), 7);  // every config timed once per shape class
      ok += r.status() == v1::OK;
      if (op == "attention")  // which config each shape class chose, in the log
        std::printf("  %s %s: %s, %.1f us, %s\n", api::ProblemLabel(r.problem()).c_str(),
                    v1::Dtype_Name(r.problem().dtype()).c_str(), v1::ResultStatus_Name(r.status()).c_str(),
                    r.timing().median_ns() / 1e3, r.custom().triton_config().c_str());
    }
    return {ok, skipped};
  }
};

// The small and edge presets in every dtype the rung implements; attention also one canonical shape
// (B16 H16 N2048 d64 causal, against the device reference) in bf16.
TEST_P(TritonRungGpuTest, IsCorrect) {
  ASSERT_TRUE(NodeTritonCapability().available) << NodeTritonCapability().Describe();
  const kernels::OpDef& op = this->op();
  const kernels::Variant& variant = *op.find_variant(GetParam());
  v1::JobSpec spec = Spec(op.name, {}, {});
  spec.add_problems()->set_preset("small");
  for (kernels::Dtype d : variant.dtypes) spec.add_dtypes(ToProtoDtype(d));
  spec.add_variants(variant.name);
  std::vector<v1::Result> results = Run(spec);
  spec.mutable_problems(0)->set_preset("edge");
  for (v1::Result& r : Run(spec)) results.push_back(std::move(r));
  const auto [ok, skipped] = Check(results, op.name);
  EXPECT_GT(ok, 0);
  if (op.name == "attention") EXPECT_EQ(skipped, static_cast<int>(variant.dtypes.size()));  // d = 256, per dtype
  if (op.name != "attention") return;
  v1::JobSpec canonical = Spec("attention", {"B=16,H=16,H_kv=16,N_q=2048,N_kv=2048,d=64"}, {v1::DTYPE_BF16});
  canonical.mutable_problems(0)->mutable_shape()->add_flags("causal");
  canonical.add_variants(variant.name);
  const std::vector<v1::Result> large = Run(canonical);
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(Check(large, op.name), (std::pair<int, int>{1, 0}));
  std::printf("  triton_attention %s bf16: %.1f us, config %s\n", api::ProblemLabel(large[0].problem()).c_str(),
              large[0].timing().median_ns() / 1e3, large[0].custom().triton_config().c_str());
}

INSTANTIATE_TEST_SUITE_P(Suite, TritonRungGpuTest, ::testing::ValuesIn(SuiteTritonRungs()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST_F(TritonGpuTest, UserKernelFromSourceIsCorrectAndCached) {
  v1::JobSpec spec = Spec("rmsnorm", {"rows=64,cols=4096", "rows=128,cols=4096", "rows=769,cols=5125"},
                          {v1::DTYPE_BF16, v1::DTYPE_F32});
  spec.add_variants("custom:mine");
  *spec.add_custom_variants() = Triton("mine", kRmsnorm);
  const std::vector<v1::Result> results = Run(spec);
  ASSERT_EQ(results.size(), 6u);
  int hits = 0;
  for (const v1::Result& r : results) {
    SCOPED_TRACE(api::ProblemLabel(r.problem()));
    EXPECT_EQ(r.status(), v1::OK) << r.status_message();
    EXPECT_TRUE(r.correctness().passed());
    EXPECT_EQ(r.custom().entry(), "my_rmsnorm");
    EXPECT_EQ(r.custom().grid(0), r.problem().dims(0).value());
    EXPECT_EQ(r.custom().block(0), 128u);
    if (r.custom().cache_hit()) {
      ++hits;
      EXPECT_EQ(r.custom().compile_ns(), 0);
    } else {
      EXPECT_GT(r.custom().compile_ns(), 0);  // a first compile is reported
    }
  }
  EXPECT_EQ(hits, 2);  // rows=128 after rows=64, per dtype
}

TEST_F(TritonGpuTest, BrokenKernelsCostOneResult) {
  std::string broken = kRmsnorm;
  broken.replace(broken.find("tl.sum("), 7, "tl.summ(");
  v1::JobSpec compile = Spec("rmsnorm", {"rows=8,cols=64"}, {v1::DTYPE_BF16});
  compile.add_variants("custom:broken");
  *compile.add_custom_variants() = Triton("broken", broken);
  std::vector<v1::Result> results = Run(compile);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status(), v1::COMPILE_ERROR);
  EXPECT_NE(results[0].status_message().find("summ"), std::string::npos) << results[0].status_message();

  for (const auto& [name, source, expected] :
       {std::tuple{"oob", kOutOfBounds, v1::RUNTIME_ERROR}, std::tuple{"hang", kHang, v1::TIMEOUT}}) {
    SCOPED_TRACE(name);
    v1::JobSpec spec = Spec("vector_add", {"N=4096"}, {v1::DTYPE_F32});
    spec.mutable_settings()->set_timeout_ns(3'000'000'000);
    spec.add_variants(std::string("custom:") + name);
    *spec.add_custom_variants() = Triton(name, source);
    spec.mutable_custom_variants(0)->set_compile_timeout_ns(8'000'000'000);  // the watchdog: 3 s + 8 s
    results = Run(spec);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].status(), expected) << results[0].status_message();
    v1::JobSpec next = Spec("vector_add", {"N=4096"}, {v1::DTYPE_F32});
    next.add_variants("triton_vector_add");
    results = Run(next);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].status(), v1::OK) << results[0].status_message();
  }
}

}  // namespace
}  // namespace kbench::worker
