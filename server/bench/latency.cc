// Exact percentiles over every recorded call (nearest rank).
#include "server/bench/latency.h"

#include <algorithm>
#include <limits>

namespace kbench::load {
namespace {

double PercentileMs(const std::vector<uint32_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  // Nearest rank: the smallest value with at least q of the calls at or below it.
  size_t rank = static_cast<size_t>(q * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1] / 1000.0;
}

}  // namespace

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "CODE_" + std::to_string(static_cast<int>(code));
  }
}

void LatencyRecorder::OpenWindow(Time t) {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = t;
}

void LatencyRecorder::CloseWindow(Time t) {
  std::lock_guard<std::mutex> lock(mu_);
  close_ = t;
}

void LatencyRecorder::Record(const std::string& rpc, Time start, Time end, const grpc::Status& status) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(end - start).count();
  const uint32_t clamped =
      static_cast<uint32_t>(std::clamp<int64_t>(us, 0, std::numeric_limits<uint32_t>::max()));
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = series_[rpc];
  if (start >= open_ && start < close_) s.micros.push_back(clamped);
  if (!status.ok()) {
    const std::string code = CodeName(status.error_code());
    ++s.error_codes[code];
    s.first_error.emplace(code, status.error_message().substr(0, 200));
  }
}

std::vector<RpcSummary> LatencyRecorder::Summaries() const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::chrono::duration<double> window = close_ == Time::max() || open_ == Time::max() ? Time::duration(0) : close_ - open_;
  std::vector<RpcSummary> out;
  for (const auto& [rpc, s] : series_) {
    RpcSummary& r = out.emplace_back();
    r.rpc = rpc;
    r.calls = static_cast<int64_t>(s.micros.size());
    for (const auto& [code, n] : s.error_codes) r.errors += n;
    r.per_second = window.count() > 0 ? static_cast<double>(r.calls) / window.count() : 0;
    std::vector<uint32_t> sorted = s.micros;
    std::sort(sorted.begin(), sorted.end());
    r.p50_ms = PercentileMs(sorted, 0.50);
    r.p99_ms = PercentileMs(sorted, 0.99);
    r.max_ms = sorted.empty() ? 0 : sorted.back() / 1000.0;
    r.error_codes = s.error_codes;
    r.first_error = s.first_error;
  }
  return out;
}

int64_t LatencyRecorder::total_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  for (const auto& [rpc, s] : series_)
    for (const auto& [code, count] : s.error_codes) n += count;
  return n;
}

}  // namespace kbench::load
