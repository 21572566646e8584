// Custom kernels end to end on a GPU, through the job runner and a real kbench-runner child process:
// the rmsnorm template from CUDA source (f32 and bf16, correct against the reference, the second
// compile a cache hit), a vector_add from PTX, a compile error with NVRTC's log, and isolation: an
// out-of-bounds kernel is RUNTIME_ERROR, a hanging one TIMEOUT, and the next item still runs OK.
// And nothing to steal: with KBENCH_TOKEN in this (the worker's) environment, a source that includes
// /proc/self/environ or /etc/passwd comes back COMPILE_ERROR naming the line, with no byte of either.
// The runner is found beside this binary or in ../bin (build tree and bundle), or at $KBENCH_RUNNER.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "api/names.h"
#include "api/shape.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gtest/gtest.h"
#include "worker/plan/catalog.h"
#include "worker/custom/contract.h"
#include "worker/custom/nvrtc_compiler.h"
#include "worker/isolation/isolated_backend.h"
#include "worker/runner/job_runner.h"

namespace kbench::worker {
namespace {

constexpr char kSecret[] = "s3cr3t-gpu-xyz";

std::string RunnerPath() {
  if (const char* p = std::getenv("KBENCH_RUNNER"); p && *p) return p;
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& candidate : {self / "kbench-runner", self / ".." / "bin" / "kbench-runner"})
    if (std::filesystem::exists(candidate)) return candidate.string();
  return "";
}

v1::LaunchContract ContractOf(const std::string& op) { return *MakeLaunchContract(*kernels::BuiltinRegistry().Find(op)); }

class CustomKernelsGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KBENCH_REQUIRE_GPU_OR_SKIP();
    // A GPU is there: a runner that is missing or does not start is a failure, not a skip.
    const std::string runner = RunnerPath();
    ASSERT_FALSE(runner.empty()) << "kbench-runner not found beside the test (set KBENCH_RUNNER)";
    // A secret in the worker's environment before the runner starts: it must never reach a result.
    setenv("KBENCH_TOKEN", kSecret, 1);
    auto backend = IsolatedBackend::Create({.runner_path = runner,
                                            .backend = "cuda",
                                            .device = 0,
                                            .log_path = "/tmp/kbench-custom-gpu-test-runner.log",
                                            .quick_calibration = true},
                                           kernels::Backend::kCuda);
    ASSERT_TRUE(backend.ok()) << "the CUDA runner did not start: " << backend.status();
    backend_ = std::move(*backend);
    catalog_ = std::make_unique<Catalog>(kernels::BuiltinRegistry(), std::set<kernels::Backend>{kernels::Backend::kCuda});
    runner_ = std::make_unique<JobRunner>(*catalog_, *backend_);
  }

  static v1::JobSpec Spec(const std::string& op, const std::vector<std::string>& shapes, const std::vector<v1::Dtype>& dtypes) {
    v1::JobSpec spec;
    spec.set_op(op);
    for (const auto& s : shapes) *spec.add_problems()->mutable_shape() = *api::ParseShape(s);
    for (v1::Dtype d : dtypes) spec.add_dtypes(d);
    auto* s = spec.mutable_settings();
    s->set_warmup_ns(10'000'000);
    s->set_min_time_ns(20'000'000);
    s->set_max_time_ns(200'000'000);
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

  static v1::CustomVariant Custom(const std::string& name, const std::string& source, v1::CustomSourceKind kind) {
    v1::CustomVariant c;
    c.set_name(name);
    c.set_kind(kind);
    c.set_source(source);
    return c;
  }

  std::unique_ptr<IsolatedBackend> backend_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<JobRunner> runner_;
};

TEST_F(CustomKernelsGpuTest, RmsnormFromSourceIsCorrectAndCached) {
  v1::JobSpec spec = Spec("rmsnorm", {"rows=769,cols=5125", "rows=64,cols=4096"}, {v1::DTYPE_F32, v1::DTYPE_BF16});
  spec.add_variants("custom:tmpl");
  *spec.add_custom_variants() = Custom("tmpl", ContractOf("rmsnorm").template_source(), v1::CUDA_SOURCE);
  const std::vector<v1::Result> results = Run(spec);
  ASSERT_EQ(results.size(), 4u);  // 2 shapes x 2 dtypes
  int hits = 0;
  for (const v1::Result& r : results) {
    SCOPED_TRACE(r.variant() + " " + api::ProblemLabel(r.problem()));
    EXPECT_EQ(r.status(), v1::OK) << r.status_message();
    EXPECT_EQ(r.variant(), "custom:tmpl");
    EXPECT_TRUE(r.correctness().passed());
    EXPECT_GT(r.timing().median_ns(), 0);
    EXPECT_EQ(r.custom().entry(), "kbench_rmsnorm");
    EXPECT_NE(r.custom().compiler().find("nvrtc"), std::string::npos);
    EXPECT_EQ(r.custom().grid(0), r.problem().dims(0).value());  // one block per row
    ASSERT_EQ(r.resources_size(), 1);
    EXPECT_GT(r.resources(0).registers_per_thread(), 0);
    hits += r.custom().cache_hit();
  }
  EXPECT_GE(hits, 2);  // the second shape of each dtype compiles nothing
}

TEST_F(CustomKernelsGpuTest, VectorAddFromPtx) {
  const v1::LaunchContract c = ContractOf("vector_add");
  NvrtcRequest req{.source = c.template_source(), .file_name = "add.cu",
                   .headers = {{kContractHeaderName, ContractHeader()}},
                   .options = {"--gpu-architecture=compute_80", "--pre-include=kbench_contract.h", "-DKBENCH_DTYPE_F32"},
                   .name_expression = "&kbench_vector_add"};
  absl::StatusOr<NvrtcOutput> ptx = CompileWithNvrtc(req, std::chrono::seconds(120));
  ASSERT_TRUE(ptx.ok() && ptx->compiled) << (ptx.ok() ? ptx->log : ptx.status().ToString());
  v1::JobSpec spec = Spec("vector_add", {"N=1048576", "N=5125", "N=1"}, {v1::DTYPE_F32});
  spec.add_variants("custom:ptx");
  v1::CustomVariant custom = Custom("ptx", ptx->ptx, v1::PTX);
  custom.add_dtypes(v1::DTYPE_F32);
  custom.add_block(128);
  custom.add_grid("cdiv(N, block_x)");
  *spec.add_custom_variants() = custom;
  for (const v1::Result& r : Run(spec)) {
    EXPECT_EQ(r.status(), v1::OK) << api::ProblemLabel(r.problem()) << ": " << r.status_message();
    EXPECT_TRUE(r.correctness().passed());
    EXPECT_EQ(r.custom().kind(), v1::PTX);
    EXPECT_EQ(r.custom().block(0), 128u);
  }
}

TEST_F(CustomKernelsGpuTest, CompileErrorsAndContractViolationsAreResultsNotCrashes) {
  v1::JobSpec spec = Spec("vector_add", {"N=4096"}, {v1::DTYPE_F32});
  spec.add_variants("custom:syntax");
  spec.add_variants("custom:int_dim");
  spec.add_variants("custom:good");
  *spec.add_custom_variants() = Custom("syntax", "extern \"C\" __global__ void kbench_vector_add( {", v1::CUDA_SOURCE);
  *spec.add_custom_variants() = Custom(
      "int_dim", "extern \"C\" __global__ void kbench_vector_add(const float* x, const float* y, float* out, int N) {}",
      v1::CUDA_SOURCE);
  *spec.add_custom_variants() = Custom("good", ContractOf("vector_add").template_source(), v1::CUDA_SOURCE);
  const std::vector<v1::Result> results = Run(spec);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status(), v1::COMPILE_ERROR);
  EXPECT_NE(results[0].status_message().find("syntax.cu("), std::string::npos) << results[0].status_message();
  EXPECT_EQ(results[1].status(), v1::COMPILE_ERROR);
  EXPECT_NE(results[1].status_message().find("parameter 4 (N) must be a 64-bit integer"), std::string::npos)
      << results[1].status_message();
  EXPECT_EQ(results[2].status(), v1::OK) << results[2].status_message();
}

TEST_F(CustomKernelsGpuTest, IncludesOfTheWorkersFilesAreRefusedAndLeakNothing) {
  const std::string kernel =
      "extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, long long N) {}\n";
  v1::JobSpec spec = Spec("vector_add", {"N=4096"}, {v1::DTYPE_F32});
  const std::vector<std::pair<std::string, std::string>> attacks = {
      {"environ", "#include \"/proc/self/environ\"\n"},
      {"environ_angle", "\n#include </proc/self/environ>\n"},
      {"passwd", "#include \"/etc/passwd\"\n"},
      {"computed", "#define F \"/proc/self/environ\"\n#include F\n"}};
  for (const auto& [name, include] : attacks) {
    spec.add_variants("custom:" + name);
    *spec.add_custom_variants() = Custom(name, include + kernel, v1::CUDA_SOURCE);
  }
  spec.add_variants("custom:good");
  *spec.add_custom_variants() = Custom("good", ContractOf("vector_add").template_source(), v1::CUDA_SOURCE);
  const std::vector<v1::Result> results = Run(spec);
  ASSERT_EQ(results.size(), attacks.size() + 1);
  const int lines[] = {1, 2, 1, 2};
  for (size_t i = 0; i < attacks.size(); ++i) {
    const v1::Result& r = results[i];
    SCOPED_TRACE(r.variant());
    EXPECT_EQ(r.status(), v1::COMPILE_ERROR) << r.status_message();
    EXPECT_NE(r.status_message().find(attacks[i].first + ".cu(" + std::to_string(lines[i]) + "): error"),
              std::string::npos)
        << r.status_message();
    const std::string all = r.DebugString();  // every field of the result, not only the message
    for (const char* leak : {kSecret, "KBENCH_TOKEN", "root:x:0:0"})
      EXPECT_EQ(all.find(leak), std::string::npos) << leak << " in " << all;
  }
  // The sandboxed compile still works, and says how it was confined.
  EXPECT_EQ(results.back().status(), v1::OK) << results.back().status_message();
  EXPECT_EQ(results.back().custom().compile_log().rfind("[kbench sandbox: ", 0), 0u) << results.back().custom().compile_log();
}

TEST_F(CustomKernelsGpuTest, OutOfBoundsAndHangCostOneResultEach) {
  const std::string oob =
      "extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, long long N) {\n"
      "  out[(long long)threadIdx.x + (1ll << 40)] = x[0];\n"
      "}\n";
  const std::string hang =
      "extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, long long N) {\n"
      // %globaltimer, one clock for the whole GPU, read by volatile asm the compiler must keep (a loop
      // on a local it may delete). Not clock64(): that is each SM's own counter, and a block the GPU
      // resumes on another SM (time-sliced beside other processes) can read it lower and leave the loop.
      "  unsigned long long start, now;\n"
      "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(start));\n"
      "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(now)); } while (now >= start);\n"
      "}\n";
  v1::JobSpec spec = Spec("vector_add", {"N=4096"}, {v1::DTYPE_F32});
  spec.mutable_settings()->set_timeout_ns(3'000'000'000);
  for (const char* v : {"custom:oob", "custom:hang", "custom:good"}) spec.add_variants(v);
  *spec.add_custom_variants() = Custom("oob", oob, v1::CUDA_SOURCE);
  *spec.add_custom_variants() = Custom("hang", hang, v1::CUDA_SOURCE);
  *spec.add_custom_variants() = Custom("good", ContractOf("vector_add").template_source(), v1::CUDA_SOURCE);
  const int starts = backend_->runner_starts();
  const std::vector<v1::Result> results = Run(spec);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status(), v1::RUNTIME_ERROR) << results[0].status_message();
  EXPECT_NE(results[0].status_message().find("illegal"), std::string::npos) << results[0].status_message();
  EXPECT_EQ(results[1].status(), v1::TIMEOUT) << results[1].status_message();
  EXPECT_EQ(results[2].status(), v1::OK) << results[2].status_message();
  EXPECT_TRUE(results[2].correctness().passed());
  EXPECT_EQ(backend_->runner_starts(), starts + 2);  // one fresh runner after the fault, one after the hang
}

}  // namespace
}  // namespace kbench::worker
