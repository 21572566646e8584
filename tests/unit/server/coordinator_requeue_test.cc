// LeaseJob requeues expired leases at most every lease_requeue_interval: an idle fleet's thousand
// polls a second would otherwise each cost a write transaction. An expired job still goes back to the
// queue within that interval, and the reaper's own RequeueExpired is never throttled.
#include <memory>

#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

struct Fleet {
  explicit Fleet(std::chrono::milliseconds interval) {
    auto opened = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(opened.ok()) << opened.status();
    store = *std::move(opened);
    CoordinatorConfig config;
    config.lease_ttl = std::chrono::milliseconds(1000);
    config.lease_requeue_interval = interval;
    coordinator = std::make_unique<Coordinator>(config, store.get(), &clock, nullptr);
    w1 = coordinator->RegisterWorker(testing::CpuWorker("one"))->worker_id;
    w2 = coordinator->RegisterWorker(testing::CpuWorker("two"))->worker_id;
    job_id = coordinator->Submit(testing::RmsnormSpec(), "")->job_id;
  }
  FakeClock clock;
  std::unique_ptr<SqliteStore> store;
  std::unique_ptr<Coordinator> coordinator;
  std::string w1, w2, job_id;
};

TEST(LeaseRequeueInterval, AnExpiredLeaseWaitsForTheIntervalThenGoesToTheNextPoll) {
  Fleet s(std::chrono::milliseconds(5000));
  ASSERT_TRUE(s.coordinator->LeaseJob(s.w1)->granted);  // requeue ran at t0
  s.clock.AdvanceMs(1001);                               // the lease has expired
  EXPECT_FALSE(s.coordinator->LeaseJob(s.w2)->granted);  // within the interval: not requeued yet
  EXPECT_EQ(s.coordinator->GetJob(s.job_id)->state(), v1::RUNNING);
  s.clock.AdvanceMs(4000);  // 5001 ms since the last requeue
  auto second = s.coordinator->LeaseJob(s.w2);
  ASSERT_TRUE(second.ok() && second->granted);
  EXPECT_EQ(second->job.job_id(), s.job_id);
  EXPECT_EQ(second->job.attempts(), 2);
}

TEST(LeaseRequeueInterval, TheReapersRequeueIsNotThrottled) {
  Fleet s(std::chrono::milliseconds(5000));
  ASSERT_TRUE(s.coordinator->LeaseJob(s.w1)->granted);
  s.clock.AdvanceMs(1001);
  auto changed = s.coordinator->RequeueExpired();
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(changed->size(), 1u);
  EXPECT_TRUE(s.coordinator->LeaseJob(s.w2)->granted);
}

TEST(LeaseRequeueInterval, ZeroRequeuesBeforeEveryLease) {
  Fleet s(std::chrono::milliseconds(0));
  ASSERT_TRUE(s.coordinator->LeaseJob(s.w1)->granted);
  s.clock.AdvanceMs(1001);
  EXPECT_TRUE(s.coordinator->LeaseJob(s.w2)->granted);
}

}  // namespace
}  // namespace kbench::server
