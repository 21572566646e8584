// Per-RPC latency and outcome counts of a load run: every call's latency is kept (a minute of load is
// a few hundred thousand calls), so the percentiles are exact, not estimated from buckets.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "grpcpp/support/status.h"

namespace kbench::load {

struct RpcSummary {
  std::string rpc;
  int64_t calls = 0;
  int64_t errors = 0;          // Calls that did not return OK (in the window or not).
  double per_second = 0;       // Calls over the measured window.
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  std::map<std::string, int64_t> error_codes;  // "UNAVAILABLE" -> count; first message of each kept apart.
  std::map<std::string, std::string> first_error;
};

class LatencyRecorder {
 public:
  using Time = std::chrono::steady_clock::time_point;
  // The measured window: calls started inside it give the latencies and rates; errors count whenever
  // they happen (warm-up, drain), since they are about correctness.
  void OpenWindow(Time t);
  void CloseWindow(Time t);
  // Records one finished call; thread-safe.
  void Record(const std::string& rpc, Time start, Time end, const grpc::Status& status);
  // One summary per rpc (sorted by name), rates over the window.
  std::vector<RpcSummary> Summaries() const;
  int64_t total_errors() const;

 private:
  struct Series {
    std::vector<uint32_t> micros;
    std::map<std::string, int64_t> error_codes;
    std::map<std::string, std::string> first_error;
  };
  mutable std::mutex mu_;
  Time open_ = Time::max(), close_ = Time::max();
  std::map<std::string, Series> series_;
};

// "OK", "UNAVAILABLE", ... for a gRPC status code.
std::string CodeName(grpc::StatusCode code);

}  // namespace kbench::load
