// CallPool: its threads run tasks at the same time, in the order queued, and the destructor runs
// every queued task before it returns.
#include "server/service/call_pool.h"

#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kbench::server {
namespace {

TEST(CallPool, EveryThreadRunsATaskAtOnce) {
  constexpr int kThreads = 4;
  CallPool pool(kThreads);
  EXPECT_EQ(pool.threads(), kThreads);
  absl::Mutex mu;
  int started = 0, finished = 0, met = 0;
  for (int i = 0; i < kThreads; ++i) {
    pool.Run([&] {
      absl::MutexLock lock(&mu);
      ++started;
      auto all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return started == kThreads; };
      // True only when kThreads tasks run at the same time; the bound keeps a pool with fewer
      // threads from hanging the test (it then fails).
      if (mu.AwaitWithTimeout(absl::Condition(&all), absl::Seconds(60))) ++met;
      ++finished;
    });
  }
  absl::MutexLock lock(&mu);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return finished == kThreads; };
  mu.Await(absl::Condition(&done));
  EXPECT_EQ(met, kThreads);
}

TEST(CallPool, OneThreadRunsTasksInOrderAndTheDestructorRunsWhatIsQueued) {
  std::vector<int> order;
  absl::Mutex gate_mu;
  bool open = false;
  {
    CallPool pool(1);
    // The first task holds the only thread until every other task is queued.
    pool.Run([&] {
      absl::MutexLock lock(&gate_mu);
      gate_mu.Await(absl::Condition(&open));
      order.push_back(0);
    });
    for (int i = 1; i <= 100; ++i) pool.Run([&order, i] { order.push_back(i); });
    EXPECT_GE(pool.queued(), 100u);
    absl::MutexLock lock(&gate_mu);
    open = true;
  }  // The destructor runs the 100 queued tasks, then joins.
  ASSERT_EQ(order.size(), 101u);
  for (int i = 0; i <= 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(CallPool, AtLeastOneThread) {
  bool ran = false;
  {
    CallPool pool(0);
    EXPECT_EQ(pool.threads(), 1);
    pool.Run([&] { ran = true; });
  }
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace kbench::server
