// The phases of a load run and its report.
#include "server/bench/load_run.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/bench/coordinator_process.h"
#include "server/bench/load_data.h"
#include "server/bench/rpc.h"
#include "server/bench/scheduler.h"
#include "server/bench/sim.h"

namespace kbench::load {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

constexpr seconds kRegisterTimeout{300};
constexpr auto kSample = std::chrono::milliseconds(500);  // How often RSS and progress are read.

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string line;
  std::getline(f, line);
  std::vector<std::string> words = absl::StrSplit(line, ' ');
  if (words.size() > 3) words.resize(3);
  return absl::StrJoin(words, " ");
}

double OwnCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Waits until done() or the deadline, reading the coordinator's RSS meanwhile into *max_rss_kb.
template <class Done>
bool WaitSampling(Clock::time_point deadline, pid_t pid, int64_t* max_rss_kb, Done done) {
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    if (pid > 0)
      if (absl::StatusOr<ProcessUsage> u = ReadUsage(pid); u.ok()) *max_rss_kb = std::max(*max_rss_kb, u->rss_kb);
    // The load generator's own pacing: the simulated fleet runs on the scheduler, this thread watches.
    std::this_thread::sleep_for(std::min<Clock::duration>(kSample, std::max<Clock::duration>(
                                                                       deadline - Clock::now(), Clock::duration(0))));
  }
  return true;
}

}  // namespace

LoadReport RunLoad(const LoadConfig& config, pid_t pid) {
  LoadReport report;
  const std::vector<v1::OpInfo> catalog = LoadCatalog(config.catalog_ops);
  report.registration_bytes = static_cast<int64_t>(LoadWorkerInfo(0, catalog).ByteSizeLong());
  report.results_per_job = static_cast<int64_t>(PlanResults(catalog, LoadJobSpec(0, config.catalog_ops,
                                                                                  config.variants_per_job)).size());
  LatencyRecorder recorder;
  Ledger ledger;
  auto scheduler = std::make_unique<Scheduler>();
  const int channels = config.channels > 0 ? config.channels : config.workers + config.clients;
  Rpcs rpcs(config.address, channels, config.rpc_timeout, scheduler.get(), &recorder);
  SimEnv env;
  env.config = &config;
  env.rpcs = &rpcs;
  env.scheduler = scheduler.get();
  env.ledger = &ledger;
  env.catalog = &catalog;
  std::vector<std::unique_ptr<SimWorker>> workers;
  std::vector<std::unique_ptr<SimClient>> clients;
  for (int i = 0; i < config.workers; ++i) workers.push_back(std::make_unique<SimWorker>(i, &env));
  for (int i = 0; i < config.clients; ++i) clients.push_back(std::make_unique<SimClient>(config.workers + i, &env));

  int64_t ignored = 0;
  for (auto& w : workers) w->Start();
  WaitSampling(Clock::now() + kRegisterTimeout, pid, &ignored, [&] { return env.registered == config.workers; });
  report.registered = env.registered;

  // The measured window: the clients submit.
  const Clock::time_point open = Clock::now();
  recorder.OpenWindow(open);
  report.loadavg_open = LoadAverage();
  const double own_cpu_open = OwnCpuSeconds();
  absl::StatusOr<ProcessUsage> usage_open = pid > 0 ? ReadUsage(pid) : absl::NotFoundError("no pid");
  const int64_t completed_open = ledger.completed();
  std::mt19937_64 starts(config.seed);
  std::uniform_int_distribution<int64_t> start_offset(0, config.client_start_spread.count());
  for (auto& c : clients) c->Start(std::chrono::milliseconds(start_offset(starts)));
  WaitSampling(open + config.duration, pid, &report.rss_max_window_kb, [] { return false; });
  env.submitting = false;
  const Clock::time_point close = Clock::now();
  recorder.CloseWindow(close);
  report.window_seconds = std::chrono::duration<double>(close - open).count();
  report.loadavg_close = LoadAverage();
  report.load_gen_cpu_cores = (OwnCpuSeconds() - own_cpu_open) / report.window_seconds;
  absl::StatusOr<ProcessUsage> usage_close = pid > 0 ? ReadUsage(pid) : absl::NotFoundError("no pid");
  report.jobs_completed_in_window = ledger.completed() - completed_open;

  // The drain: every submitted job read back by its client.
  int64_t rss_drain = 0;
  report.drained = WaitSampling(close + config.drain_timeout, pid, &rss_drain, [&] { return ledger.outstanding() == 0; });
  env.stopping = true;
  scheduler->Stop();
  const Clock::time_point quiet_deadline = Clock::now() + config.rpc_timeout + seconds(5);
  WaitSampling(quiet_deadline, -1, &ignored, [&] { return rpcs.in_flight() == 0; });

  report.rpcs = recorder.Summaries();
  report.rpc_errors = recorder.total_errors();
  api::ChannelOptions options{config.address, config.client_token};
  std::unique_ptr<v1::Coordinator::Stub> stub = v1::Coordinator::NewStub(api::MakeChannel(options));
  report.verdict = ledger.Verify(*stub, config.client_token, config.samples_per_result);
  if (!report.drained)
    report.verdict.problems.insert(report.verdict.problems.begin(),
                                   std::to_string(ledger.outstanding()) + " submitted jobs not finished after the drain");
  absl::StatusOr<ProcessUsage> usage_end = pid > 0 ? ReadUsage(pid) : absl::NotFoundError("no pid");
  if (usage_open.ok() && usage_close.ok() && usage_end.ok()) {
    report.has_usage = true;
    report.rss_open_kb = usage_open->rss_kb;
    report.rss_close_kb = usage_close->rss_kb;
    report.rss_max_window_kb = std::max(report.rss_max_window_kb, report.rss_close_kb);
    report.hwm_kb = usage_end->hwm_kb;
    report.rss_end_kb = usage_end->rss_kb;
    report.coordinator_cpu_cores = (usage_close->cpu_seconds - usage_open->cpu_seconds) / report.window_seconds;
  }
  // In-flight calls are done: their continuations were dropped with the scheduler, before the fleet goes.
  scheduler.reset();
  return report;
}

bool Correct(const LoadReport& r) {
  return r.drained && r.rpc_errors == 0 && r.verdict.lost == 0 && r.verdict.duplicated == 0 &&
         r.verdict.problems.empty() && r.verdict.succeeded == r.verdict.jobs && r.verdict.jobs > 0;
}

void PrintReport(const LoadConfig& c, const LoadReport& r, std::FILE* out) {
  std::fprintf(out,
               "kbench-load: %d workers (%d registered, %lld-byte registrations), %d clients (first submissions "
               "spread over %lld ms), %.1f s window\n",
               c.workers, r.registered, static_cast<long long>(r.registration_bytes), c.clients,
               static_cast<long long>(c.client_start_spread.count()), r.window_seconds);
  std::fprintf(out, "jobs completed in the window: %lld (%.1f jobs/s, %.1f result rows/s, %lld results each)\n",
               static_cast<long long>(r.jobs_completed_in_window), r.jobs_completed_in_window / r.window_seconds,
               static_cast<double>(r.jobs_completed_in_window * r.results_per_job) / r.window_seconds,
               static_cast<long long>(r.results_per_job));
  std::fprintf(out, "%-16s %10s %10s %10s %10s %10s %8s\n", "rpc", "calls", "per s", "p50 ms", "p99 ms", "max ms",
               "errors");
  for (const RpcSummary& s : r.rpcs) {
    std::fprintf(out, "%-16s %10lld %10.1f %10.2f %10.2f %10.1f %8lld\n", s.rpc.c_str(),
                 static_cast<long long>(s.calls), s.per_second, s.p50_ms, s.p99_ms, s.max_ms,
                 static_cast<long long>(s.errors));
    for (const auto& [code, n] : s.error_codes)
      std::fprintf(out, "    %s x%lld, first: %s\n", code.c_str(), static_cast<long long>(n),
                   s.first_error.at(code).c_str());
  }
  if (r.has_usage)
    std::fprintf(out,
                 "coordinator: RSS %.1f MiB at the window's start, %.1f MiB at its end (max %.1f), peak (VmHWM) "
                 "%.1f MiB, %.1f MiB after the drain; CPU %.2f cores over the window\n",
                 r.rss_open_kb / 1024.0, r.rss_close_kb / 1024.0, r.rss_max_window_kb / 1024.0, r.hwm_kb / 1024.0,
                 r.rss_end_kb / 1024.0, r.coordinator_cpu_cores);
  std::fprintf(out, "kbench-load itself: CPU %.2f cores; load average %s at the start, %s at the end\n",
               r.load_gen_cpu_cores, r.loadavg_open.c_str(), r.loadavg_close.c_str());
  const Ledger::Verdict& v = r.verdict;
  std::fprintf(out, "jobs: %lld submitted, %lld succeeded with every result once, %lld lost, %lld duplicated\n",
               static_cast<long long>(v.jobs), static_cast<long long>(v.succeeded), static_cast<long long>(v.lost),
               static_cast<long long>(v.duplicated));
  if (v.requeued > 0 || v.leases_lost > 0)
    std::fprintf(out, "overload: %lld jobs run again after their lease expired (%lld reports refused)\n",
                 static_cast<long long>(v.requeued), static_cast<long long>(v.leases_lost));
  for (size_t i = 0; i < v.problems.size() && i < 20; ++i) std::fprintf(out, "  problem: %s\n", v.problems[i].c_str());
  if (v.problems.size() > 20) std::fprintf(out, "  ... and %zu more problems\n", v.problems.size() - 20);
  std::fprintf(out, "%s\n", Correct(r) ? "CORRECT: no job lost or duplicated, every call OK"
                                       : "INCORRECT: see above");
}

}  // namespace kbench::load
