#include "server/auth/rate_limiter.h"

#include <algorithm>

namespace kbench::server::auth {

TokenBucket::TokenBucket(double rate_per_second, double burst, SteadyTime now)
    : rate_(rate_per_second), burst_(burst), tokens_(burst), last_(now) {}

void TokenBucket::Refill(SteadyTime now) {
  if (now <= last_) return;  // A clock that stands still or goes back gives nothing.
  const double seconds = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + seconds * rate_);
  last_ = now;
}

bool TokenBucket::TryTake(SteadyTime now) {
  Refill(now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

double TokenBucket::Available(SteadyTime now) {
  Refill(now);
  return tokens_;
}

RateLimiter::RateLimiter(size_t keys, double rate_per_second, double burst, Now now)
    : rate_(rate_per_second),
      burst_(burst),
      now_(now ? std::move(now) : Now([] { return std::chrono::steady_clock::now(); })) {
  const SteadyTime start = now_();
  buckets_.assign(keys, TokenBucket(rate_, burst_, start));
}

bool RateLimiter::Allow(size_t key) {
  const SteadyTime now = now_();
  absl::MutexLock lock(&mu_);
  if (key >= buckets_.size()) return false;
  return buckets_[key].TryTake(now);
}

}  // namespace kbench::server::auth
