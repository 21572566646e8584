// The Reaper ticks at once on Start, and Stop returns promptly even with a long period.
#include "server/service/reaper.h"

#include <chrono>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kbench::server {
namespace {

TEST(Reaper, TicksOnStartAndStopsWithoutWaitingOutThePeriod) {
  absl::Mutex mu;
  int ticks = 0;
  Reaper reaper(
      [&] {
        absl::MutexLock lock(&mu);
        ++ticks;
      },
      std::chrono::hours(1));
  reaper.Start();
  {
    absl::MutexLock lock(&mu);
    // Waits for the first tick (a condition, not a sleep); the bound only guards against a hang.
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(+[](int* t) { return *t > 0; }, &ticks), absl::Seconds(30)));
  }
  const auto start = std::chrono::steady_clock::now();
  reaper.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(ticks, 1);
  reaper.Stop();  // Idempotent.
}

}  // namespace
}  // namespace kbench::server
