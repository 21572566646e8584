#include "worker/agent/lease_reporter.h"

#include <algorithm>

namespace kbench::worker {
namespace {

using std::chrono::milliseconds;

int64_t NowUnixMs() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

bool IsLeaseLost(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::FAILED_PRECONDITION || s.error_code() == grpc::StatusCode::NOT_FOUND;
}

LeaseReporter::LeaseReporter(v1::Coordinator::StubInterface& stub, CallFn call, const v1::LeaseJobResponse& lease,
                             int32_t results_total, DeviceLease& device)
    : stub_(stub),
      call_(std::move(call)),
      lease_id_(lease.lease_id()),
      device_(device),
      expires_unix_ms_(lease.lease_expires_unix_ms()),
      last_report_(std::chrono::steady_clock::now()) {
  progress_.set_results_total(results_total);
  keeper_ = std::thread([this] { KeepAlive(); });
}

LeaseReporter::~LeaseReporter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  keeper_.join();
}

bool LeaseReporter::lease_lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
}

std::string LeaseReporter::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

bool LeaseReporter::has_pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !pending_.empty();
}

void LeaseReporter::OnEvent(const v1::RunJobEvent& event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (event.has_progress()) {
      progress_.set_current(event.progress().current());
    } else {
      pending_.push_back(event.result());
      progress_.set_results_done(progress_.results_done() + 1);
    }
  }
  Report(true);
}

bool LeaseReporter::Flush() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    progress_.clear_current();
  }
  Report(true);
  return !has_pending();
}

void LeaseReporter::Report(bool with_results) {
  std::lock_guard<std::mutex> sending(send_mu_);
  v1::ReportProgressRequest request;
  size_t sent = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lost_) return;
    request.set_lease_id(lease_id_);
    *request.mutable_progress() = progress_;
    if (with_results) {
      for (const v1::Result& r : pending_) *request.add_results() = r;
      sent = pending_.size();
    }
  }
  v1::ReportProgressResponse response;
  const grpc::Status s =
      call_([&](grpc::ClientContext* ctx) { return stub_.ReportProgress(ctx, request, &response); });
  std::lock_guard<std::mutex> lock(mu_);
  if (s.ok()) {
    // Only this thread adds results while a report is in flight, after the ones sent: drop those.
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(std::min(sent, pending_.size())));
    if (response.lease_expires_unix_ms() > 0) expires_unix_ms_ = response.lease_expires_unix_ms();
    last_report_ = std::chrono::steady_clock::now();
    if (response.cancelled()) device_.Cancel();
  } else if (IsLeaseLost(s)) {
    lost_ = true;
    pending_.clear();
    device_.Cancel();
  } else if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    // Sending it again would be refused again, forever: keep the reason, stop the job.
    if (refused_.empty()) refused_ = s.error_message();
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(std::min(sent, pending_.size())));
    device_.Cancel();
  }
  // Other failures (coordinator down): the results stay pending for the next report.
}

void LeaseReporter::KeepAlive() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!done_ && !lost_) {
    // A third of the lease's remaining time after the last report: two chances before it expires.
    const int64_t remaining_ms = expires_unix_ms_ > 0 ? expires_unix_ms_ - NowUnixMs() : 15'000;
    const milliseconds period(std::clamp<int64_t>(remaining_ms / 3, 200, 10'000));
    const auto due = last_report_ + period;
    if (cv_.wait_until(lock, due, [this] { return done_; })) return;
    if (std::chrono::steady_clock::now() < last_report_ + period) continue;  // A report came meanwhile.
    lock.unlock();
    Report(false);
    lock.lock();
    // A failed keep-alive must not spin: wait a whole period before the next one.
    last_report_ = std::max(last_report_, std::chrono::steady_clock::now() - period / 2);
  }
}

}  // namespace kbench::worker
