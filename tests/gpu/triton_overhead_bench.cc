// triton_overhead_bench: what a Triton rung adds to a job on this machine's GPU, as a table (a
// benchmark program, not a test: it asserts nothing about time). For each op, jobs of one problem
// through the job runner in this process (as kbench-bench and a runner do), with the same short
// settings: the op's CUDA rung, then its Triton rung (the first job: a compile when the kernel cache
// is cold, a cache hit when warm; the result's custom.compile_ns and cache_hit say which), then the
// Triton rung again (the kernel loaded and its autotune choice kept, as in a long-lived runner).
// "added" is the job's wall time minus the CUDA rung's (medians of 3); the measurement itself (the
// same time budget, the same reference check) cancels out. Run it twice with one KBENCH_KERNEL_CACHE
// (tests/gpu/triton_overhead.sh): the first run compiles, the second starts a new runner on a warm
// cache. The node's Triton probe (python -c "import triton", once per runner at its start) is timed
// apart: a job never waits for it.
//   KBENCH_KERNEL_CACHE=/tmp/kc triton_overhead_bench [--ops rmsnorm,gemm,attention]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api/shape.h"
#include "core/registry.h"
#include "worker/calibration_cache.h"
#include "worker/cuda/cuda_backend.h"
#include "worker/plan/catalog.h"
#include "worker/runner/job_runner.h"
#include "worker/triton/triton_compiler.h"

namespace kbench::worker {
namespace {

struct Case {
  const char* op;
  const char* shape;
  bool causal;
  const char* cuda_rung;
  const char* triton_rung;
};

constexpr Case kCases[] = {
    // Small problems: the jobs' own work (inputs, reference, timing) is what cancels out, and short.
    {"rmsnorm", "rows=1024,cols=4096", false, "cuda_v7_cp_async_ring", "triton_rmsnorm"},
    {"gemm", "M=1024,N=1024,K=1024", false, "cublas_bf16", "triton_gemm"},
    {"attention", "B=1,H=8,H_kv=8,N_q=1024,N_kv=1024,d=128", true, "cuda_v4_flash_wgmma", "triton_attention"},
};

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Job {
  double wall_ms = 0;
  v1::Result result;
};

Job RunOne(JobRunner& runner, const Case& c, const char* variant) {
  v1::JobSpec spec;
  spec.set_op(c.op);
  v1::Problem shape = *api::ParseShape(c.shape);
  if (c.causal) shape.add_flags("causal");
  *spec.add_problems()->mutable_shape() = shape;
  spec.add_dtypes(v1::DTYPE_BF16);
  spec.add_variants(variant);
  v1::MeasurementSettings* s = spec.mutable_settings();
  s->set_warmup_ns(2'000'000);
  s->set_min_time_ns(10'000'000);
  s->set_max_time_ns(200'000'000);
  s->set_correctness_trials(1);
  s->set_timeout_ns(120'000'000'000);
  Job job;
  CancelFlag never;
  const auto begin = std::chrono::steady_clock::now();
  const absl::Status st = runner.Run(spec, {.job_id = "overhead"}, never, [&](const v1::RunJobEvent& e) {
    if (e.has_result()) job.result = e.result();
  });
  job.wall_ms = Ms(begin, std::chrono::steady_clock::now());
  if (!st.ok()) job.result.set_status_message(std::string(st.message()));
  return job;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Row(const char* op, const std::string& variant, const char* what, double wall, double added, const v1::Result& r) {
  const v1::CustomKernelInfo& k = r.custom();
  std::printf("%-10s %-22s %-26s %9.1f %9s %10s %-5s %8s %7.1f  %s\n", op, variant.c_str(), what, wall,
              added < -1e8 ? "-" : (std::to_string(static_cast<int>(added + (added < 0 ? -0.5 : 0.5)))).c_str(),
              k.compile_ns() > 0 ? std::to_string(static_cast<int>(k.compile_ns() / 1e6)).c_str() : "-",
              r.has_custom() ? (k.cache_hit() ? "hit" : "miss") : "-",
              k.triton_autotune_size() > 0 ? std::to_string(k.triton_autotune_size()).c_str() : "-",
              r.timing().median_ns() / 1e3,
              r.status() == v1::OK ? "ok" : (v1::ResultStatus_Name(r.status()) + ": " + r.status_message().substr(0, 60)).c_str());
}

int Main(const std::vector<std::string>& ops) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it comes, also into a pipe cut by a time limit
  const auto probe_begin = std::chrono::steady_clock::now();
  const TritonCapability& triton = NodeTritonCapability();
  const double probe_ms = Ms(probe_begin, std::chrono::steady_clock::now());
  std::printf("Triton probe (once per runner, at its start): %.0f ms, %s\n", probe_ms, triton.Describe().c_str());
  absl::StatusOr<std::unique_ptr<CudaBackend>> backend = CudaBackend::Create(0, CudaCalibrationOptions{.quick = true});
  if (!backend.ok()) {
    std::fprintf(stderr, "triton_overhead_bench: %s\n", std::string(backend.status().message()).c_str());
    return 1;
  }
  if (auto cal = LoadOrCalibrate(**backend, {.quick = true}); !cal.ok()) {
    std::fprintf(stderr, "triton_overhead_bench: calibration: %s\n", std::string(cal.status().message()).c_str());
    return 1;
  }
  std::printf("device %s, bf16, settings: warm-up 2 ms, timed >= 10 ms, 1 correctness trial\n",
              (*backend)->device().name().c_str());
  Catalog catalog(kernels::BuiltinRegistry(), {kernels::Backend::kCuda});
  JobRunner runner(catalog, **backend);
  std::printf("%-10s %-22s %-26s %9s %9s %10s %-5s %8s %7s  %s\n", "op", "variant", "job", "wall_ms", "added_ms",
              "compile_ms", "cache", "autotune", "kern_us", "status");
  int bad = 0;
  for (const Case& c : kCases) {
    if (std::find(ops.begin(), ops.end(), c.op) == ops.end()) continue;
    RunOne(runner, c, c.cuda_rung);  // first touch of the op: its reference and buffers, for neither side
    std::vector<double> cuda_ms;
    Job cuda;
    for (int i = 0; i < 3; ++i) cuda = RunOne(runner, c, c.cuda_rung), cuda_ms.push_back(cuda.wall_ms);
    const double base = Median(cuda_ms);
    Row(c.op, c.cuda_rung, "CUDA rung (median of 3)", base, -1e9, cuda.result);
    const Job first = RunOne(runner, c, c.triton_rung);
    Row(c.op, c.triton_rung,
        first.result.custom().cache_hit() ? "first job, cache warm" : "first job, cache cold", first.wall_ms,
        first.wall_ms - base, first.result);
    std::vector<double> again_ms;
    Job again;
    for (int i = 0; i < 3; ++i) again = RunOne(runner, c, c.triton_rung), again_ms.push_back(again.wall_ms);
    Row(c.op, c.triton_rung, "loaded (median of 3)", Median(again_ms), Median(again_ms) - base, again.result);
    bad += cuda.result.status() != v1::OK || first.result.status() != v1::OK || again.result.status() != v1::OK;
  }
  return bad ? 1 : 0;
}

}  // namespace
}  // namespace kbench::worker

int main(int argc, char** argv) {
  std::vector<std::string> ops = {"rmsnorm", "gemm", "attention"};
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ops=", 6) == 0 || (std::strcmp(argv[i], "--ops") == 0 && i + 1 < argc)) {
      std::string list = argv[i][5] == '=' ? argv[i] + 6 : argv[++i];
      ops.clear();
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        ops.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      std::printf("usage: KBENCH_KERNEL_CACHE=DIR %s [--ops rmsnorm,gemm,attention]\n"
                  "Prints what a Triton rung adds to a job's wall time (cold cache, warm cache, loaded) against a "
                  "CUDA rung of the same op. Run twice with one cache directory to see both.\n",
                  argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  return kbench::worker::Main(ops);
}
