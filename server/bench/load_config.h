// kbench-load's settings, filled from flags by load_gen_main.cc and passed down as one struct.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kbench::load {

struct LoadConfig {
  std::string address;          // The coordinator's host:port (loopback).
  std::string worker_token;     // Bearer tokens when the coordinator checks them; empty: none.
  std::string client_token;
  int workers = 1000;           // Simulated workers (each registers, heartbeats, leases, reports).
  int clients = 100;            // Simulated users (each submits, polls, reads results; one job at a time).
  int channels = 0;             // gRPC channels (TCP connections) shared round-robin; 0: one per worker and client.
  std::chrono::milliseconds duration{60'000};  // Clients submit for this long; then the drain.
  std::chrono::milliseconds drain_timeout{180'000};  // Longest wait for the last jobs to finish.
  // A worker's pace, as kbench-worker's agent: idle lease polls back off from idle_initial to idle_max.
  std::chrono::milliseconds idle_initial{200};
  std::chrono::milliseconds idle_max{1'000};
  // The agent's long poll (LeaseJobRequest.wait_ms): an empty lease call is held this long by the
  // coordinator, and the worker asks again at once after it; 0: the idle backoff above.
  std::chrono::milliseconds lease_wait{10'000};
  std::chrono::milliseconds result_time{100};   // Simulated measuring time of one result.
  // A client's pace, as `kbench-client submit --wait`: GetJob every poll_interval; every list_every-th
  // poll is a ListJobs (a status page) as well; think_time between a job's results and the next submit.
  std::chrono::milliseconds poll_interval{200};
  int list_every = 5;
  std::chrono::milliseconds think_time{0};
  // Clients start at seeded offsets spread over this long, as the workers' heartbeats and polls are:
  // a real fleet's users do not all submit in the same millisecond. 0: every client at the window's open.
  std::chrono::milliseconds client_start_spread{1'000};
  int variants_per_job = 2;     // Results per job = variants x shapes (one shape per job).
  int samples_per_result = 50;  // Raw samples in each reported result.
  int catalog_ops = 12;         // Ops in each worker's catalog (the registration's size, and Submit's catalog merge).
  std::chrono::milliseconds rpc_timeout{30'000};  // Deadline of every call.
  uint64_t seed = 1;
};

}  // namespace kbench::load
