// Time source of the coordinator. Injected so that lease expiry and worker liveness are tested with a
// fake clock instead of sleeps.
#pragma once

#include <chrono>
#include <cstdint>

namespace kbench::server {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time in milliseconds since the Unix epoch (the unit of every *_unix_ms field).
  virtual int64_t NowUnixMs() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowUnixMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace kbench::server
