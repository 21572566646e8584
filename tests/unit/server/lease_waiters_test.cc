// LeaseWaiters: which parked lease call a queued job wakes, Park's check for jobs queued since the
// caller's attempt, and every other way a wait ends (deadline, cancel, close) resuming it once.
#include "server/service/lease_waiters.h"
#include "server/service/queue_watch.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "fixtures.h"
#include "gtest/gtest.h"

namespace kbench::server {
namespace {

using Wake = LeaseWaiters::Wake;

// What resumed each waiter, by name, in order.
struct Log {
  std::mutex mu;
  std::vector<std::string> events;
  void Add(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }
};

const char* Name(Wake w) {
  switch (w) {
    case Wake::kJobQueued: return "queued";
    case Wake::kTimedOut: return "timeout";
    case Wake::kCancelled: return "cancelled";
    case Wake::kClosed: return "closed";
  }
  return "?";
}

std::shared_ptr<const v1::WorkerInfo> Worker(bool has_rmsnorm) {
  v1::WorkerInfo w = testing::CpuWorker("w");
  if (!has_rmsnorm) w.mutable_catalog()->Clear();
  return std::make_shared<const v1::WorkerInfo>(std::move(w));
}

LeaseWaiters::Waiter Waiting(const std::string& name, std::shared_ptr<const v1::WorkerInfo> worker, Log* log,
                             absl::Duration wait = absl::Hours(1), absl::Notification* done = nullptr) {
  return LeaseWaiters::Waiter{
      .key = nullptr,
      .worker = std::move(worker),
      .deadline = absl::Now() + wait,
      .cancelled = nullptr,
      .resume =
          [name, log, done](Wake why, std::shared_ptr<const v1::JobSpec> spec) {
            log->Add(name + ":" + Name(why) + (spec != nullptr ? ":" + spec->op() : ""));
            if (done != nullptr) done->Notify();
          },
  };
}

TEST(LeaseWaitersTest, AQueuedJobWakesTheLongestWaiterThatCanRunIt) {
  Log log;  // Outlives the waiters, whose destruction resumes those still parked.
  LeaseWaiters waiters;
  LeaseWaiters::Waiter cannot = Waiting("cannot", Worker(false), &log);
  LeaseWaiters::Waiter first = Waiting("first", Worker(true), &log);
  LeaseWaiters::Waiter second = Waiting("second", Worker(true), &log);
  for (LeaseWaiters::Waiter* w : {&cannot, &first, &second})
    ASSERT_EQ(waiters.Park(w, waiters.epoch()), LeaseWaiters::Parked::kYes);
  EXPECT_EQ(waiters.parked(), 3u);
  waiters.JobQueued(testing::RmsnormSpec());
  EXPECT_EQ(log.Get(), std::vector<std::string>{"first:queued:rmsnorm"});
  waiters.JobQueued(testing::RmsnormSpec());
  EXPECT_EQ(log.Get(), (std::vector<std::string>{"first:queued:rmsnorm", "second:queued:rmsnorm"}));
  // Nobody left who can run it: the one that cannot stays parked.
  waiters.JobQueued(testing::RmsnormSpec());
  EXPECT_EQ(log.Get().size(), 2u);
  EXPECT_EQ(waiters.parked(), 1u);
  waiters.Close();
  EXPECT_EQ(log.Get().back(), "cannot:closed");
}

TEST(LeaseWaitersTest, ParkAsksToRetryOnlyWhenAJobItCanRunWasQueuedSinceItsAttempt) {
  Log log;  // Outlives the waiters, whose destruction resumes those still parked.
  LeaseWaiters waiters;
  const uint64_t seen = waiters.epoch();
  waiters.JobQueued(testing::RmsnormSpec());  // Between the caller's empty attempt and its Park.
  LeaseWaiters::Waiter can = Waiting("can", Worker(true), &log);
  EXPECT_EQ(waiters.Park(&can, seen), LeaseWaiters::Parked::kRetry);
  EXPECT_TRUE(can.resume) << "not taken when not parked";
  LeaseWaiters::Waiter cannot = Waiting("cannot", Worker(false), &log);
  EXPECT_EQ(waiters.Park(&cannot, seen), LeaseWaiters::Parked::kYes);
  // Too far back to tell what was queued: retry.
  for (int i = 0; i < 300; ++i) waiters.JobQueued(testing::RmsnormSpec());
  LeaseWaiters::Waiter late = Waiting("late", Worker(false), &log);
  EXPECT_EQ(waiters.Park(&late, seen), LeaseWaiters::Parked::kRetry);
  EXPECT_TRUE(log.Get().empty());
}

TEST(LeaseWaitersTest, AWaitEndsAtItsDeadline) {
  Log log;  // Outlives the waiters, whose destruction resumes those still parked.
  LeaseWaiters waiters;
  absl::Notification done;
  LeaseWaiters::Waiter w = Waiting("short", Worker(true), &log, absl::Milliseconds(20), &done);
  ASSERT_EQ(waiters.Park(&w, waiters.epoch()), LeaseWaiters::Parked::kYes);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(log.Get(), std::vector<std::string>{"short:timeout"});
  EXPECT_EQ(waiters.parked(), 0u);
}

TEST(LeaseWaitersTest, CancelAndCloseResumeEachWaiterOnce) {
  Log log;  // Outlives the waiters, whose destruction resumes those still parked.
  LeaseWaiters waiters;
  int key_a = 0, key_b = 0;
  LeaseWaiters::Waiter a = Waiting("a", Worker(true), &log);
  a.key = &key_a;
  ASSERT_EQ(waiters.Park(&a, waiters.epoch()), LeaseWaiters::Parked::kYes);
  waiters.Cancel(&key_a);
  waiters.Cancel(&key_a);  // Not parked any more: nothing.
  waiters.Cancel(&key_b);  // Never parked.
  EXPECT_EQ(log.Get(), std::vector<std::string>{"a:cancelled"});
  // Cancelled before it could park.
  std::atomic<bool> cancelled{true};
  LeaseWaiters::Waiter b = Waiting("b", Worker(true), &log);
  b.cancelled = &cancelled;
  EXPECT_EQ(waiters.Park(&b, waiters.epoch()), LeaseWaiters::Parked::kCancelled);
  LeaseWaiters::Waiter c = Waiting("c", Worker(true), &log);
  ASSERT_EQ(waiters.Park(&c, waiters.epoch()), LeaseWaiters::Parked::kYes);
  waiters.Close();
  LeaseWaiters::Waiter d = Waiting("d", Worker(true), &log);
  EXPECT_EQ(waiters.Park(&d, waiters.epoch()), LeaseWaiters::Parked::kClosed);
  waiters.JobQueued(testing::RmsnormSpec());
  EXPECT_EQ(log.Get(), (std::vector<std::string>{"a:cancelled", "c:closed"}));
}

TEST(QueueWatchTest, AnnouncesEachQueuedJobAndAttemptOnce) {
  Log log;  // Outlives the waiters, whose destruction resumes those still parked.
  LeaseWaiters waiters;
  std::vector<v1::Job> queue(2);
  queue[0].set_job_id("j-1");
  queue[0].set_attempts(0);
  *queue[0].mutable_spec() = testing::RmsnormSpec();
  queue[1] = queue[0];
  queue[1].set_job_id("j-2");
  QueueWatch watch([&] { return absl::StatusOr<std::vector<v1::Job>>(queue); }, &waiters, absl::Hours(1));
  EXPECT_TRUE(watch.MarkAnnounced(queue[1]));  // Queued in this process: announced already.
  EXPECT_FALSE(watch.MarkAnnounced(queue[1]));
  for (const char* name : {"a", "b", "c"}) {
    LeaseWaiters::Waiter w = Waiting(name, Worker(true), &log);
    ASSERT_EQ(waiters.Park(&w, waiters.epoch()), LeaseWaiters::Parked::kYes);
  }
  EXPECT_EQ(watch.Look(), 1);
  EXPECT_EQ(watch.Look(), 0);
  queue[1].set_attempts(1);  // Back in the queue after its lease expired: a new announcement.
  EXPECT_EQ(watch.Look(), 1);
  EXPECT_EQ(log.Get(), (std::vector<std::string>{"a:queued:rmsnorm", "b:queued:rmsnorm"}));
}

}  // namespace
}  // namespace kbench::server
