// Exponential backoff between retries: initial, doubled after each failure, capped at max.
#pragma once

#include <algorithm>
#include <chrono>

namespace kbench::worker {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max) : initial_(initial), max_(max), next_(initial) {}

  // The wait before the next attempt; each call doubles the following one.
  std::chrono::milliseconds Next() {
    const auto now = next_;
    next_ = std::min(max_, next_ * 2);
    return now;
  }
  void Reset() { next_ = initial_; }

 private:
  std::chrono::milliseconds initial_, max_, next_;
};

}  // namespace kbench::worker
