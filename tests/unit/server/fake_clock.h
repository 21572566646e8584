// A clock the test moves by hand, so that lease expiry and liveness need no sleeps.
#pragma once

#include <atomic>
#include <cstdint>

#include "server/coordinator/clock.h"

namespace kbench::server {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now_ms = 1'700'000'000'000) : now_ms_(now_ms) {}
  int64_t NowUnixMs() const override { return now_ms_.load(); }
  void AdvanceMs(int64_t ms) { now_ms_ += ms; }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace kbench::server
