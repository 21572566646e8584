// The SQLite store's group commit: calls that promise durability sync the WAL before they return,
// soft state (heartbeats) and calls that write nothing do not, concurrent commits share one sync, and
// a WAL that cannot be synced is an error, never a silent success.
#include "server/store/sqlite_group_commit.h"

#include <fstream>
#include <thread>
#include <vector>

#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

TEST(GroupCommit, OneSyncCoversEveryCommitMadeBeforeItStarted) {
  const std::string wal = testing::TempDbPath() + "-wal";
  std::ofstream(wal) << "frames";
  sqlite::GroupCommit gc(wal);
  EXPECT_TRUE(gc.WaitDurable(0).ok());  // nothing written: nothing to wait for
  EXPECT_EQ(gc.syncs(), 0u);
  const uint64_t a = gc.Committed(), b = gc.Committed(), c = gc.Committed();
  ASSERT_TRUE(gc.WaitDurable(a).ok());
  EXPECT_EQ(gc.syncs(), 1u);
  ASSERT_TRUE(gc.WaitDurable(c).ok());  // b and c were committed before a's sync began
  ASSERT_TRUE(gc.WaitDurable(b).ok());
  EXPECT_EQ(gc.syncs(), 1u);
  const uint64_t d = gc.Committed();
  EXPECT_EQ(gc.Latest(), d);
  ASSERT_TRUE(gc.WaitDurable(d).ok());  // committed after that sync: needs its own
  EXPECT_EQ(gc.syncs(), 2u);
}

TEST(GroupCommit, AWalThatCannotBeOpenedIsAnErrorNamingIt) {
  sqlite::GroupCommit gc("/nonexistent-dir/for/sure/kbench.db-wal");
  const absl::Status s = gc.WaitDurable(gc.Committed());
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("kbench.db-wal"), absl::string_view::npos) << s;
}

v1::Job Queued(const std::string& id) {
  v1::Job job;
  job.set_job_id(id);
  job.set_state(v1::QUEUED);
  return job;
}

TEST(SqliteGroupCommit, DurableCallsSyncAndSoftStateAndEmptyPollsDoNot) {
  auto opened = SqliteStore::Open(testing::TempDbPath());
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStore& store = **opened;
  const uint64_t at_open = store.durable_syncs();
  v1::WorkerInfo w;
  w.set_worker_id("w-1");
  ASSERT_TRUE(store.UpsertWorker(w, 1).ok());
  EXPECT_EQ(store.durable_syncs(), at_open + 1);
  ASSERT_TRUE(store.Heartbeat("w-1", 2).ok());  // soft state
  EXPECT_EQ(store.durable_syncs(), at_open + 1);
  const auto none = [](const v1::JobSpec&) { return true; };
  auto empty = store.LeaseNextJob("w-1", none, 3, 1000, "l-0");  // empty queue: a read
  ASSERT_TRUE(empty.ok() && !empty->has_value());
  ASSERT_TRUE(store.RequeueExpired(3, 3).ok());  // nothing expired: writes nothing
  EXPECT_EQ(store.durable_syncs(), at_open + 1);

  ASSERT_TRUE(store.InsertJob(Queued("j-1")).ok());
  EXPECT_EQ(store.durable_syncs(), at_open + 2);
  auto lease = store.LeaseNextJob("w-1", none, 4, 1000, "l-1");
  ASSERT_TRUE(lease.ok() && lease->has_value()) << lease.status();
  EXPECT_EQ(store.durable_syncs(), at_open + 3);
  ASSERT_TRUE(store.CompleteJob("l-1", 5, false, "").ok());
  EXPECT_EQ(store.durable_syncs(), at_open + 4);
  // A retried submission (same idempotency key) waits for the first one's commit too.
  v1::Job keyed = Queued("j-2");
  keyed.set_idempotency_key("k");
  ASSERT_TRUE(store.InsertJob(keyed).ok());
  const uint64_t after_first = store.durable_syncs();
  keyed.set_job_id("j-3");
  auto again = store.InsertJob(keyed);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->inserted);
  EXPECT_EQ(again->job.job_id(), "j-2");
  EXPECT_GE(store.durable_syncs(), after_first);
}

TEST(SqliteGroupCommit, NormalSynchronousAndInMemoryStoresNeverSync) {
  auto normal = SqliteStore::Open(testing::TempDbPath(), /*fsync_each_commit=*/false);
  auto memory = SqliteStore::Open(":memory:");
  ASSERT_TRUE(normal.ok() && memory.ok());
  for (SqliteStore* s : {normal->get(), memory->get()}) {
    ASSERT_TRUE(s->InsertJob(Queued("j-1")).ok());
    EXPECT_EQ(s->durable_syncs(), 0u);
  }
}

TEST(SqliteGroupCommit, ConcurrentSubmissionsAllLandAndNeverSyncMoreThanTheyCommit) {
  const std::string path = testing::TempDbPath();
  auto opened = SqliteStore::Open(path);
  ASSERT_TRUE(opened.ok());
  SqliteStore& store = **opened;
  constexpr int kThreads = 8, kEach = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < kEach; ++i)
        EXPECT_TRUE(store.InsertJob(Queued("j-" + std::to_string(t) + "-" + std::to_string(i))).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_GE(store.durable_syncs(), 1u);
  EXPECT_LE(store.durable_syncs(), static_cast<uint64_t>(kThreads * kEach));
  auto counts = store.CountJobsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[v1::QUEUED], kThreads * kEach);
}

}  // namespace
}  // namespace kbench::server
