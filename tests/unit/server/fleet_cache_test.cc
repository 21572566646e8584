// The fleet view Submit and LeaseJob use (server/coordinator/fleet_cache.h): two coordinators on one store stand
// for two replicas. A worker registered through the other one must be usable at once: a job only it
// can run is accepted (the refusal on the cached view is checked afresh) and it can lease; a worker
// re-registered here with another catalog is seen at once. Fails if the view is trusted for refusals
// or for workers changed since it was read.
#include "server/coordinator/fleet_cache.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "fixtures.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

using testing::CpuWorker;
using testing::RmsnormSpec;

v1::WorkerInfo VectorAddWorker(const std::string& name) {
  v1::WorkerInfo w = CpuWorker(name);
  w.clear_catalog();
  *w.add_catalog() = testing::VectorAddOp();
  w.mutable_devices(0)->set_uuid("cpu-" + name);
  return w;
}

v1::JobSpec VectorAddSpec() {
  v1::JobSpec spec;
  spec.set_op("vector_add");
  v1::Problem* p = spec.add_problems()->mutable_shape();
  p->add_dims()->set_value(1024);
  p->set_dtype(v1::DTYPE_F32);
  return spec;
}

class FleetCacheTest : public ::testing::Test {
 protected:
  FleetCacheTest() {
    auto store = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    CoordinatorConfig config;
    config.fleet_cache_max_age = std::chrono::hours(1);  // Never expires within the test.
    here_ = std::make_unique<Coordinator>(config, store_.get(), &clock_);
    other_ = std::make_unique<Coordinator>(config, store_.get(), &clock_);
  }

  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> here_, other_;
};

TEST_F(FleetCacheTest, AWorkerRegisteredThroughAnotherReplicaIsUsableAtOnce) {
  ASSERT_TRUE(here_->RegisterWorker(CpuWorker("rms")).ok());
  ASSERT_TRUE(here_->Submit(RmsnormSpec(), "").ok());  // Caches a view without the vector_add worker.
  absl::StatusOr<RegisterOutcome> va = other_->RegisterWorker(VectorAddWorker("va"));
  ASSERT_TRUE(va.ok()) << va.status();
  absl::StatusOr<SubmitOutcome> job = here_->Submit(VectorAddSpec(), "");
  ASSERT_TRUE(job.ok()) << job.status();
  absl::StatusOr<LeaseOutcome> lease = here_->LeaseJob(va->worker_id, "cpu-va");
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_TRUE(lease->granted);
  EXPECT_EQ(lease->job.job_id(), job->job_id);
}

TEST_F(FleetCacheTest, ARegistrationHereIsSeenAtOnce) {
  absl::StatusOr<RegisterOutcome> w = here_->RegisterWorker(CpuWorker("w"));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(here_->Submit(RmsnormSpec(), "").ok());
  // The same worker comes back with vector_add only: rmsnorm is refused, vector_add accepted.
  v1::WorkerInfo again = VectorAddWorker("w");
  again.set_worker_id(w->worker_id);
  ASSERT_TRUE(here_->RegisterWorker(again).ok());
  absl::StatusOr<SubmitOutcome> rms = here_->Submit(RmsnormSpec(), "");
  EXPECT_TRUE(absl::IsInvalidArgument(rms.status())) << rms.status();
  EXPECT_TRUE(here_->Submit(VectorAddSpec(), "").ok());
  // Its lease matches the new registration (the vector_add job; the first rmsnorm job is not its).
  absl::StatusOr<LeaseOutcome> lease = here_->LeaseJob(w->worker_id, "cpu-w");
  ASSERT_TRUE(lease.ok()) << lease.status();
  ASSERT_TRUE(lease->granted);
  EXPECT_EQ(lease->job.spec().op(), "vector_add");
}

TEST_F(FleetCacheTest, ConcurrentCallersShareOneRead) {
  ASSERT_TRUE(here_->RegisterWorker(CpuWorker("a")).ok());
  FleetCache cache(std::chrono::hours(1));
  absl::StatusOr<FleetCache::View> first = cache.Get(store_.get(), FleetCache::Want::kAny);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->cached);
  absl::StatusOr<FleetCache::View> second = cache.Get(store_.get(), FleetCache::Want::kUnchanged);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->cached);
  EXPECT_EQ(second->fleet.get(), first->fleet.get());
  cache.Invalidate(first->fleet->workers().front().info->worker_id());
  absl::StatusOr<FleetCache::View> any = cache.Get(store_.get(), FleetCache::Want::kAny);
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->changed->size(), 1u);  // Served, with the changed worker named.
  absl::StatusOr<FleetCache::View> unchanged = cache.Get(store_.get(), FleetCache::Want::kUnchanged);
  ASSERT_TRUE(unchanged.ok());
  EXPECT_FALSE(unchanged->cached);  // Read again: a worker changed since.
  EXPECT_TRUE(unchanged->changed->empty());
}

// A kAny call that finds the view expired is served it at once and the view is read again on
// another thread: here that read blocks until released, and kAny calls are still answered from the
// old view meanwhile (a call that read inline would never return); once it is done a fresh read sees
// it finished. Fails if such a call reads the view itself, or if the background read never publishes.
TEST_F(FleetCacheTest, AnExpiredViewIsServedToLeasesAtOnceAndReadAgainBehind) {
  ASSERT_TRUE(here_->RegisterWorker(CpuWorker("a")).ok());
  absl::Notification second_read_began, release;
  std::atomic<int> reads{0};
  // Every view expired at once.
  FleetCache cache(std::chrono::milliseconds(0), [&](Store* store, const HaveRegistration& have) {
    if (reads.fetch_add(1) == 1) {
      second_read_began.Notify();
      release.WaitForNotification();
    }
    return store->ListWorkerRows(have);
  });
  absl::StatusOr<FleetCache::View> first = cache.Get(store_.get(), FleetCache::Want::kAny);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cached);
  absl::StatusOr<FleetCache::View> second = cache.Get(store_.get(), FleetCache::Want::kAny);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cached);
  EXPECT_EQ(second->fleet.get(), first->fleet.get());
  ASSERT_TRUE(second_read_began.WaitForNotificationWithTimeout(absl::Seconds(60)));
  absl::StatusOr<FleetCache::View> during = cache.Get(store_.get(), FleetCache::Want::kAny);
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_EQ(during->fleet.get(), first->fleet.get());
  EXPECT_EQ(cache.reads_done(), 1u);
  release.Notify();
  // kFresh waits for the read under way, then reads after its own start.
  absl::StatusOr<FleetCache::View> fresh = cache.Get(store_.get(), FleetCache::Want::kFresh);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_FALSE(fresh->cached);
  EXPECT_NE(fresh->fleet.get(), first->fleet.get());
  EXPECT_EQ(cache.reads_done(), 3u);  // the first, the background one, this one
  EXPECT_EQ(reads.load(), 3);
}

// A refresh parses only the registrations that changed: the others are the same parsed objects as
// in the view before, while heartbeats and states come from the new read. Fails if every refresh
// parses the whole fleet again, or if a changed registration is served from the old view.
TEST_F(FleetCacheTest, ARefreshParsesOnlyTheRegistrationsThatChanged) {
  std::vector<std::string> ids;
  for (const char* name : {"a", "b", "c"}) {
    absl::StatusOr<RegisterOutcome> w = here_->RegisterWorker(CpuWorker(name));
    ASSERT_TRUE(w.ok()) << w.status();
    ids.push_back(w->worker_id);
  }
  FleetCache cache(std::chrono::hours(1));
  absl::StatusOr<FleetCache::View> first = cache.Get(store_.get(), FleetCache::Want::kFresh);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->fleet->parsed(), 3u);

  clock_.AdvanceMs(5000);
  ASSERT_TRUE(here_->Heartbeat(ids[1]).ok());
  absl::StatusOr<FleetCache::View> second = cache.Get(store_.get(), FleetCache::Want::kFresh);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(second->fleet.get(), first->fleet.get());
  EXPECT_EQ(second->fleet->parsed(), 0u);
  for (const std::string& id : ids) EXPECT_EQ(second->fleet->Find(id), first->fleet->Find(id)) << id;
  EXPECT_GT(second->fleet->workers()[1].last_heartbeat_unix_ms, first->fleet->workers()[1].last_heartbeat_unix_ms);

  v1::WorkerInfo changed = VectorAddWorker("c");
  changed.set_worker_id(ids[2]);
  ASSERT_TRUE(here_->RegisterWorker(changed).ok());
  absl::StatusOr<FleetCache::View> third = cache.Get(store_.get(), FleetCache::Want::kFresh);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->fleet->parsed(), 1u);
  EXPECT_EQ(third->fleet->Find(ids[0]), first->fleet->Find(ids[0]));
  const v1::WorkerInfo* c = third->fleet->Find(ids[2]);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c, first->fleet->Find(ids[2]));
  ASSERT_EQ(c->catalog_size(), 1);
  EXPECT_EQ(c->catalog(0).name(), "vector_add");
  EXPECT_EQ(c->worker_id(), ids[2]);
  // Its catalog counts as its own: two distinct catalogs now (rmsnorm's, vector_add's).
  EXPECT_EQ(third->fleet->distinct_catalogs(), 2u);
  EXPECT_EQ(second->fleet->distinct_catalogs(), 1u);
}

// A store leaves a registration out only where the view before holds it at that version; a row
// left out that the view cannot supply is an error, never a worker without a registration.
TEST_F(FleetCacheTest, ARegistrationLeftOutThatTheViewDoesNotHoldIsAnError) {
  FleetCache cache(std::chrono::hours(1), [](Store*, const HaveRegistration& have) {
    EXPECT_FALSE(have);  // No view before: nothing is held.
    WorkerRow row;
    row.worker_id = "w-1";
    row.registration_version = 7;
    row.registration_left_out = true;
    return absl::StatusOr<std::vector<WorkerRow>>(std::vector<WorkerRow>{row});
  });
  absl::StatusOr<FleetCache::View> view = cache.Get(store_.get(), FleetCache::Want::kFresh);
  EXPECT_EQ(view.status().code(), absl::StatusCode::kInternal) << view.status();
}

}  // namespace
}  // namespace kbench::server
