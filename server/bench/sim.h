// kbench-load's simulated fleet: workers that behave as kbench-worker's agent does (register,
// heartbeat at the interval the coordinator asks for, poll LeaseJob with the agent's idle backoff,
// report each result as it finishes, complete), and clients that behave as `kbench-client submit
// --wait` does (submit with an idempotency key, poll GetJob, look at a status page now and then, read
// the results). Every step runs on the scheduler's thread; calls are async (rpc.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kbench/v1/coordinator.pb.h"
#include "server/bench/ledger.h"
#include "server/bench/load_config.h"
#include "server/bench/load_data.h"
#include "server/bench/rpc.h"
#include "server/bench/scheduler.h"

namespace kbench::load {

// What every simulated worker and client shares.
struct SimEnv {
  const LoadConfig* config = nullptr;
  Rpcs* rpcs = nullptr;
  Scheduler* scheduler = nullptr;
  Ledger* ledger = nullptr;
  const std::vector<v1::OpInfo>* catalog = nullptr;
  std::atomic<bool> submitting{true};   // Clients submit new jobs while set.
  std::atomic<bool> stopping{false};    // Workers and clients stop at their next step once set.
  std::atomic<int64_t> next_job{0};     // Numbers the jobs of the run.
  std::atomic<int> registered{0};       // Workers registered so far.
};

class SimWorker {
 public:
  SimWorker(int index, SimEnv* env);
  void Start();  // Registers, then heartbeats and leases until env->stopping.

 private:
  void Register();
  void Heartbeat();
  void Lease();
  void LeaseAfter(std::chrono::milliseconds wait);
  void ReportNext();
  void Complete();

  int index_;
  SimEnv* env_;
  v1::WorkerInfo info_;
  std::string worker_id_;
  std::chrono::milliseconds heartbeat_interval_{2000};
  std::chrono::milliseconds idle_;
  v1::Job job_;                       // The leased job, if any.
  std::string lease_id_;
  std::vector<PlannedResult> plan_;
  int next_result_ = 0;
  std::mt19937_64 rng_;
};

class SimClient {
 public:
  SimClient(int channel, SimEnv* env);  // channel: which of the Rpcs channels it calls on.
  // Submits one job at a time, the first after `delay`, until env->submitting is cleared.
  void Start(std::chrono::milliseconds delay);

 private:
  void Submit(bool retry);
  void Poll();
  void ReadResults();

  int index_;
  SimEnv* env_;
  int64_t n_ = -1;      // Number of the job in hand.
  std::string key_;
  std::string job_id_;
  int polls_ = 0;
};

}  // namespace kbench::load
