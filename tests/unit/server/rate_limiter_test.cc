// The token bucket and the per-token limiter, on a clock the test moves by hand.
#include "server/auth/rate_limiter.h"

#include "gtest/gtest.h"

namespace kbench::server::auth {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const SteadyTime kStart = SteadyTime() + std::chrono::hours(1);

TEST(TokenBucket, StartsFullThenRefillsAtTheRate) {
  TokenBucket bucket(/*rate_per_second=*/2, /*burst=*/3, kStart);
  EXPECT_TRUE(bucket.TryTake(kStart));
  EXPECT_TRUE(bucket.TryTake(kStart));
  EXPECT_TRUE(bucket.TryTake(kStart));
  EXPECT_FALSE(bucket.TryTake(kStart));  // The burst is spent.
  EXPECT_FALSE(bucket.TryTake(kStart + milliseconds(499)));  // 0.998 of a token.
  EXPECT_TRUE(bucket.TryTake(kStart + milliseconds(500)));   // 2/s: one token per 500 ms.
  EXPECT_FALSE(bucket.TryTake(kStart + milliseconds(500)));
  EXPECT_NEAR(bucket.Available(kStart + milliseconds(750)), 0.5, 1e-9);
}

TEST(TokenBucket, NeverHoldsMoreThanTheBurst) {
  TokenBucket bucket(1, 2, kStart);
  EXPECT_TRUE(bucket.TryTake(kStart));
  EXPECT_DOUBLE_EQ(bucket.Available(kStart + seconds(3600)), 2.0);
  EXPECT_TRUE(bucket.TryTake(kStart + seconds(3600)));
  EXPECT_TRUE(bucket.TryTake(kStart + seconds(3600)));
  EXPECT_FALSE(bucket.TryTake(kStart + seconds(3600)));
}

TEST(TokenBucket, TimeGoingBackwardsAddsNothing) {
  TokenBucket bucket(1, 1, kStart);
  EXPECT_TRUE(bucket.TryTake(kStart));
  EXPECT_FALSE(bucket.TryTake(kStart - seconds(10)));
  EXPECT_FALSE(bucket.TryTake(kStart + milliseconds(999)));  // Measured from kStart, not from the past.
  EXPECT_TRUE(bucket.TryTake(kStart + seconds(1)));
}

TEST(TokenBucket, FractionalRatesAccumulate) {
  TokenBucket bucket(0.5, 1, kStart);
  EXPECT_TRUE(bucket.TryTake(kStart));
  EXPECT_FALSE(bucket.TryTake(kStart + seconds(1)));
  EXPECT_TRUE(bucket.TryTake(kStart + seconds(2)));
}

TEST(RateLimiter, EachKeyHasItsOwnBucket) {
  SteadyTime now = kStart;
  RateLimiter limiter(/*keys=*/2, /*rate_per_second=*/1, /*burst=*/2, [&now] { return now; });
  EXPECT_TRUE(limiter.Allow(0));
  EXPECT_TRUE(limiter.Allow(0));
  EXPECT_FALSE(limiter.Allow(0));
  EXPECT_TRUE(limiter.Allow(1));  // Key 0 being over its limit does not touch key 1.
  EXPECT_TRUE(limiter.Allow(1));
  EXPECT_FALSE(limiter.Allow(1));
  now += seconds(1);
  EXPECT_TRUE(limiter.Allow(0));
  EXPECT_FALSE(limiter.Allow(0));
  EXPECT_FALSE(limiter.Allow(2));  // No such key.
  EXPECT_EQ(limiter.rate_per_second(), 1);
  EXPECT_EQ(limiter.burst(), 2);
}

}  // namespace
}  // namespace kbench::server::auth
