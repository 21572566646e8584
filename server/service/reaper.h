// A background thread that runs a housekeeping task (requeue expired leases, refresh gauges) at a
// fixed period until stopped. Stop() wakes it at once through a condition, so shutdown never waits
// out a period.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kbench::server {

class Reaper {
 public:
  // tick runs on the reaper's thread: once at Start, then every period.
  Reaper(std::function<void()> tick, std::chrono::milliseconds period);
  ~Reaper();  // Stops.
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  void Start();
  // Returns once the thread has finished (after a tick in progress completes). Idempotent.
  void Stop();

 private:
  void Loop();

  const std::function<void()> tick_;
  const std::chrono::milliseconds period_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kbench::server
