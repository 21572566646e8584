// Per-token rate limits: a token bucket for each token of the TokenStore (--rate-limit-per-second,
// --rate-burst). Time is passed in (a steady clock in the server, a hand-moved one in tests).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kbench::server::auth {

using SteadyTime = std::chrono::steady_clock::time_point;

// Holds up to `burst` tokens, starts full and gains `rate_per_second` per second; each request
// takes one. Not thread-safe.
class TokenBucket {
 public:
  TokenBucket(double rate_per_second, double burst, SteadyTime now);
  // Refills for the time since the last call (capped at burst; time going backwards adds nothing),
  // then takes one token if a whole one is there.
  bool TryTake(SteadyTime now);
  // Tokens there at `now`, after refilling.
  double Available(SteadyTime now);

 private:
  void Refill(SteadyTime now);

  double rate_;
  double burst_;
  double tokens_;
  SteadyTime last_;
};

// One bucket per key (a token's index in the TokenStore), all with the same rate and burst.
class RateLimiter {
 public:
  using Now = std::function<SteadyTime()>;
  // `keys` buckets; `now` defaults to std::chrono::steady_clock::now.
  RateLimiter(size_t keys, double rate_per_second, double burst, Now now = nullptr);
  // False when key's bucket is empty (the request is over the limit). Thread-safe.
  bool Allow(size_t key);
  double rate_per_second() const { return rate_; }
  double burst() const { return burst_; }

 private:
  const double rate_;
  const double burst_;
  const Now now_;
  absl::Mutex mu_;
  std::vector<TokenBucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench::server::auth
