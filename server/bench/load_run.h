// One kbench-load run: register the simulated workers, let the clients submit for the configured
// time (the measured window), drain until every submitted job is read back, then verify every job
// against the coordinator and report the calls' rates and latencies and the coordinator's usage.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "server/bench/latency.h"
#include "server/bench/ledger.h"
#include "server/bench/load_config.h"

namespace kbench::load {

struct LoadReport {
  double window_seconds = 0;
  int registered = 0;              // Workers registered before the window opened.
  int64_t registration_bytes = 0;  // One worker's RegisterWorker message.
  int64_t jobs_completed_in_window = 0;
  int64_t results_per_job = 0;
  bool drained = false;            // Every submitted job was read back before drain_timeout.
  std::vector<RpcSummary> rpcs;
  int64_t rpc_errors = 0;
  Ledger::Verdict verdict;
  // The coordinator's, when its pid is known.
  bool has_usage = false;
  int64_t rss_open_kb = 0, rss_close_kb = 0, rss_max_window_kb = 0, hwm_kb = 0, rss_end_kb = 0;
  double coordinator_cpu_cores = 0;  // CPU seconds over the window per second.
  double load_gen_cpu_cores = 0;     // kbench-load's own.
  std::string loadavg_open, loadavg_close;  // /proc/loadavg's first three fields.
};

// coordinator_pid: -1 when kbench-load did not start the coordinator and was not told its pid.
LoadReport RunLoad(const LoadConfig& config, pid_t coordinator_pid);
void PrintReport(const LoadConfig& config, const LoadReport& report, std::FILE* out);
// No job lost or duplicated, nothing out of order, no call failed, and the drain finished.
bool Correct(const LoadReport& report);

}  // namespace kbench::load
