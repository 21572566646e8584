// Reaper: the periodic loop.
#include "server/service/reaper.h"

#include <utility>

#include "absl/time/time.h"

namespace kbench::server {

Reaper::Reaper(std::function<void()> tick, std::chrono::milliseconds period)
    : tick_(std::move(tick)), period_(period) {}

Reaper::~Reaper() { Stop(); }

void Reaper::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void Reaper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Reaper::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
    }
    tick_();
    absl::MutexLock lock(&mu_);
    // Waits for the period, or returns early (true) once stop_ is set.
    if (mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::FromChrono(period_))) return;
  }
}

}  // namespace kbench::server
