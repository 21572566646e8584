// RequestGate: a counter under a mutex, drained with a condition.
#include "server/service/request_gate.h"

namespace kbench::server {

RequestGate::Pass::~Pass() {
  if (gate_ == nullptr) return;
  absl::MutexLock lock(&gate_->mu_);
  --gate_->in_progress_;
}

RequestGate::Pass RequestGate::Enter() {
  absl::MutexLock lock(&mu_);
  if (closed_) return Pass(nullptr, false);
  ++in_progress_;
  return Pass(this, true);
}

bool RequestGate::CloseAndDrain(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_progress_ == 0; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

}  // namespace kbench::server
