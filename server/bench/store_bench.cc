// kbench-store-bench: throughput of the coordinator's store through the Coordinator core (validation,
// idempotency, leases, regression verdicts), not through gRPC. A benchmark, not a test: it prints a
// table and asserts nothing.
//   submissions/s   Coordinator::Submit of jobs with labels, one transaction each (durable on return)
//   result rows/s   Coordinator::ReportProgress with --results-per-report results of --samples raw
//                   samples each, every result judged against a full baseline (10 results of its series
//                   on main); each report is one transaction (the lease extended, the results stored)
// On SQLite (a temporary file, WAL; synchronous=FULL, the default, and NORMAL, --sqlite-synchronous)
// and, with --postgres CONNSTR, on PostgreSQL
// (use an empty database: the benchmark's jobs stay there).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "server/coordinator/clock.h"
#include "server/coordinator/coordinator.h"
#include "server/store/postgres_store.h"
#include "server/store/sqlite_store.h"

ABSL_FLAG(std::string, postgres, "", "PostgreSQL connection string (empty database) to measure as well");
ABSL_FLAG(int32_t, jobs, 2000, "Jobs submitted in the submission phase");
ABSL_FLAG(int32_t, reports, 300, "Reports measured in the ingest phase (after a warm-up that fills the baselines)");
ABSL_FLAG(int32_t, results_per_report, 16, "Results per ReportProgress; each is its own series");
ABSL_FLAG(int32_t, samples, 100, "Raw samples per result");
ABSL_FLAG(int32_t, threads, 1, "Concurrent callers (each a worker of its own in the ingest phase)");
ABSL_FLAG(int32_t, pool_size, 4, "PostgreSQL connections");
ABSL_FLAG(int64_t, baseline_cache_mb, 64, "The coordinator's baseline cache (its default); 0: every verdict reads "
          "and pools its whole baseline from the store");

namespace kbench::server {
namespace {

using Clock = std::chrono::steady_clock;

v1::OpInfo BenchOp() {
  v1::OpInfo op;
  op.set_name("rmsnorm");
  op.add_dims("rows");
  op.add_dims("cols");
  op.add_dtypes(v1::DTYPE_F32);
  op.set_max_dim_value(int64_t{1} << 31);
  for (auto [name, out] : {std::pair{"x", false}, std::pair{"out", true}}) {
    v1::TensorInfo* t = op.add_tensors();
    t->set_name(name);
    t->add_dims("rows");
    t->add_dims("cols");
    t->set_is_output(out);
  }
  for (const char* v : {"v1_naive", "v2_vectorized", "v3_warp", "v4_cluster"}) {
    v1::VariantInfo* var = op.add_variants();
    var->set_name(v);
    var->set_backend(v1::BACKEND_CUDA);
    var->add_dtypes(v1::DTYPE_F32);
  }
  return op;
}

v1::WorkerInfo BenchWorker(int i) {
  v1::WorkerInfo w;
  w.set_name(absl::StrCat("bench-", i));
  v1::DeviceInfo* d = w.add_devices();
  d->set_backend(v1::BACKEND_CUDA);
  d->set_name("NVIDIA H100 80GB HBM3");
  d->set_compute_capability_major(9);
  d->set_memory_bytes(int64_t{80} << 30);
  *w.add_catalog() = BenchOp();
  return w;
}

// A job that plans at least `results` results, in the order BenchResult numbers them (shape k, then
// the 4 variants): the coordinator refuses result indexes beyond a job's plan.
v1::JobSpec BenchSpec(int results) {
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  for (int k = 0; k * 4 < std::max(results, 1); ++k) {
    v1::Problem* p = spec.add_problems()->mutable_shape();
    p->add_dims()->set_value(1024 * (1 + k));
    p->add_dims()->set_value(4096);
    p->set_dtype(v1::DTYPE_F32);
  }
  (*spec.mutable_labels())["branch"] = "main";
  (*spec.mutable_labels())["git_sha"] = "0123456789abcdef";
  return spec;
}

// Result i of a report: series i (variant and shape vary with i), samples lognormal around its time.
v1::Result BenchResult(int i, int samples, std::mt19937_64& rng) {
  v1::Result r;
  r.set_index(i);
  r.set_op("rmsnorm");
  r.set_variant(BenchOp().variants(i % 4).name());
  r.set_status(v1::OK);
  r.mutable_device()->set_name("NVIDIA H100 80GB HBM3");
  v1::Problem* p = r.mutable_problem();
  p->set_preset("canonical");
  p->set_dtype(v1::DTYPE_F32);
  v1::Dim* rows = p->add_dims();
  rows->set_name("rows");
  rows->set_value(1024 * (1 + i / 4));
  v1::Dim* cols = p->add_dims();
  cols->set_name("cols");
  cols->set_value(4096);
  std::lognormal_distribution<double> noise(0.0, 0.01);
  const double center = 10'000.0 * (1 + i);
  for (int s = 0; s < samples; ++s) r.mutable_timing()->add_samples_ns(center * noise(rng));
  r.mutable_timing()->set_median_ns(center);
  r.mutable_timing()->set_count(samples);
  r.mutable_roofline()->add_ceilings()->set_utilization(0.7);
  return r;
}

// Runs body(thread, n) for n in [0, count) split over threads; returns the seconds it took.
double Timed(int threads, int count, const std::function<void(int thread, int n)>& body) {
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  std::atomic<int> next{0};
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int n = next++; n < count; n = next++) body(t, n);
    });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Check(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "kbench-store-bench: %s: %s\n", what, std::string(s.message()).c_str());
  std::exit(1);
}

struct Row {
  std::string store;
  double submissions_per_second = 0;
  double result_rows_per_second = 0;
  double jobs_per_second = 0;     // Full cycles: lease, one report, complete.
  double report_cpu_ms = 0;       // CPU time of the calling thread per report (the rest is waiting).
  BaselineCache::Stats baselines;  // How the verdicts' baselines were pooled.
};

// CPU time of the calling thread, in seconds: what a report costs apart from waiting for the disk or
// for a share of a busy machine.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Row Measure(const std::string& name, Store* store) {
  const int threads = absl::GetFlag(FLAGS_threads);
  const int jobs = absl::GetFlag(FLAGS_jobs);
  const int reports = absl::GetFlag(FLAGS_reports);
  const int per_report = absl::GetFlag(FLAGS_results_per_report);
  const int samples = absl::GetFlag(FLAGS_samples);
  const int warmup = 12;  // Reports before measuring: more than the baseline's 10 results per series.
  SystemClock clock;
  CoordinatorConfig config;
  config.lease_ttl = std::chrono::minutes(10);
  config.baseline_cache_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_baseline_cache_mb)) << 20;
  Coordinator coordinator(config, store, &clock);
  std::vector<std::string> workers;
  for (int t = 0; t < threads; ++t) {
    absl::StatusOr<RegisterOutcome> r = coordinator.RegisterWorker(BenchWorker(t));
    Check(r.status(), "register");
    workers.push_back(r->worker_id);
  }
  Row row{name};
  const v1::JobSpec spec = BenchSpec(per_report);
  const double submit_s = Timed(threads, jobs, [&](int, int n) {
    Check(coordinator.Submit(spec, absl::StrCat("bench-", getpid(), "-", n)).status(), "submit");
  });
  row.submissions_per_second = jobs / submit_s;

  std::mt19937_64 seed_rng(1);
  std::vector<std::vector<v1::Result>> batches;  // Prepared outside the timed part.
  for (int b = 0; b < 8; ++b) {
    std::vector<v1::Result>& batch = batches.emplace_back();
    for (int i = 0; i < per_report; ++i) batch.push_back(BenchResult(i, samples, seed_rng));
  }
  double report_s = 0;
  double report_cpu_s = 0;
  std::mutex mu;
  auto cycle = [&](int t, int n, bool timed) {
    absl::StatusOr<LeaseOutcome> lease = coordinator.LeaseJob(workers[t]);
    Check(lease.status(), "lease");
    if (!lease->granted) Check(absl::ResourceExhaustedError("queue ran dry; raise --jobs"), "lease");
    const auto start = Clock::now();
    const double cpu_start = ThreadCpuSeconds();
    Check(coordinator.ReportProgress(lease->lease_id, nullptr, batches[n % batches.size()]).status(), "report");
    if (timed) {
      const double cpu = ThreadCpuSeconds() - cpu_start;
      std::lock_guard<std::mutex> lock(mu);
      report_s += std::chrono::duration<double>(Clock::now() - start).count();
      report_cpu_s += cpu;
    }
    Check(coordinator.CompleteJob(lease->lease_id, false, "").status(), "complete");
  };
  Timed(1, warmup, [&](int, int n) { cycle(0, n, false); });
  const double cycle_s = Timed(threads, reports, [&](int t, int n) { cycle(t, n, true); });
  // report_s adds up the callers' time; over threads callers in parallel, wall time is about report_s / threads.
  row.result_rows_per_second = static_cast<double>(reports) * per_report / (report_s / threads);
  row.jobs_per_second = reports / cycle_s;
  row.report_cpu_ms = report_cpu_s / reports * 1e3;
  row.baselines = coordinator.baseline_cache_stats();
  return row;
}

// Median latency of a 4 KiB write + fdatasync in dir: the disk's part of every durable commit.
double FsyncMillis(const std::string& dir) {
  const std::string path = dir + "/fsync-probe";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  const std::string block(4096, 'x');
  std::vector<double> ms;
  for (int i = 0; i < 50; ++i) {
    const auto start = Clock::now();
    if (write(fd, block.data(), block.size()) < 0 || fdatasync(fd) != 0) break;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  close(fd);
  unlink(path.c_str());
  if (ms.empty()) return -1;
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace
}  // namespace kbench::server

int main(int argc, char** argv) {
  using namespace kbench::server;
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_jobs) < absl::GetFlag(FLAGS_reports) + 12) {
    std::fprintf(stderr, "kbench-store-bench: --jobs must be at least --reports + 12\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_baseline_cache_mb) < 0) {
    std::fprintf(stderr, "kbench-store-bench: --baseline_cache_mb must be >= 0\n");
    return 2;
  }
  std::vector<Row> rows;
  std::string dir = (std::filesystem::temp_directory_path() / "kbench-bench-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) return 1;
  const double fsync_before = FsyncMillis(dir);
  for (bool full : {true, false}) {
    absl::StatusOr<std::unique_ptr<SqliteStore>> sqlite =
        SqliteStore::Open(absl::StrCat(dir, "/bench-", full ? "full" : "normal", ".db"), full);
    Check(sqlite.status(), "open sqlite");
    rows.push_back(Measure(full ? "sqlite, synchronous=FULL" : "sqlite, synchronous=NORMAL", sqlite->get()));
  }
  const double fsync_after = FsyncMillis(dir);
  std::filesystem::remove_all(dir);
  if (!absl::GetFlag(FLAGS_postgres).empty()) {
    absl::StatusOr<std::unique_ptr<PostgresStore>> pg =
        PostgresStore::Open(absl::GetFlag(FLAGS_postgres), absl::GetFlag(FLAGS_pool_size));
    Check(pg.status(), "open postgres");
    rows.push_back(Measure("postgresql", pg->get()));
  }
  std::printf("threads %d, %d jobs submitted, %d reports x %d results x %d samples (after warm-up), "
              "baseline cache %lld MiB\n",
              absl::GetFlag(FLAGS_threads), absl::GetFlag(FLAGS_jobs), absl::GetFlag(FLAGS_reports),
              absl::GetFlag(FLAGS_results_per_report), absl::GetFlag(FLAGS_samples),
              static_cast<long long>(absl::GetFlag(FLAGS_baseline_cache_mb)));
  std::printf("fdatasync of 4 KiB in %s: median %.2f ms before, %.2f ms after the SQLite runs\n",
              std::filesystem::temp_directory_path().c_str(), fsync_before, fsync_after);
  std::printf("%-32s %15s %15s %15s %15s\n", "store", "submissions/s", "result rows/s", "job cycles/s",
              "cpu ms/report");
  for (const Row& r : rows)
    std::printf("%-32s %15.0f %15.0f %15.1f %15.2f\n", r.store.c_str(), r.submissions_per_second,
                r.result_rows_per_second, r.jobs_per_second, r.report_cpu_ms);
  std::printf("baselines pooled (warm-up included): reused / updated in place / merged afresh\n");
  for (const Row& r : rows)
    std::printf("%-32s %lld / %lld / %lld\n", r.store.c_str(), static_cast<long long>(r.baselines.reused),
                static_cast<long long>(r.baselines.updated), static_cast<long long>(r.baselines.merged));
  return 0;
}
