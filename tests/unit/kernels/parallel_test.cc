// ParallelFor covers [0, n) exactly once, in contiguous chunks, and keeps tiny ranges on one thread.
#include "core/cpu/parallel.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace kbench::kernels::cpu {
namespace {

TEST(ParallelFor, CoversEveryIndexOnce) {
  for (int64_t n : {1, 2, 3, 7, 100, 1001, 65537}) {
    for (int64_t min_chunk : {1, 5, 1000, 1 << 20}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      ParallelFor(n, min_chunk, [&](int64_t b, int64_t e) {
        EXPECT_LT(b, e);
        ++calls;
        for (int64_t i = b; i < e; ++i) ++hits[i];
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
      EXPECT_LE(calls.load(), HardwareThreads());
      EXPECT_LE(calls.load(), std::max<int64_t>(1, n / min_chunk));
    }
  }
}

TEST(ParallelFor, EmptyRangeCallsNothing) {
  bool called = false;
  ParallelFor(0, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelFor, SmallRangeStaysOnCallingThread) {
  std::thread::id id;
  ParallelFor(10, 100, [&](int64_t, int64_t) { id = std::this_thread::get_id(); });
  EXPECT_EQ(id, std::this_thread::get_id());
}

TEST(ParallelFor, UsesEveryHardwareThreadForLargeRanges) {
  std::mutex mu;
  std::set<std::thread::id> ids;
  ParallelFor(int64_t{1} << 20, 1, [&](int64_t, int64_t) {
    std::lock_guard lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(static_cast<int>(ids.size()), HardwareThreads());
}

}  // namespace
}  // namespace kbench::kernels::cpu
