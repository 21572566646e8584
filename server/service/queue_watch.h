// The long polls' view of jobs queued elsewhere: another coordinator on the same PostgreSQL
// database queues jobs this one never hears of (Coordinator::set_queued_listener is per process).
// While lease calls are parked, every period it reads the newest queued jobs and announces to the
// waiters each one not announced before (by id and attempt); jobs queued here are marked as
// announced as they come. Cost: one short read a period, only while someone waits.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kbench/v1/job.pb.h"
#include "server/service/lease_waiters.h"

namespace kbench::server {

class QueueWatch {
 public:
  using ListQueued = std::function<absl::StatusOr<std::vector<v1::Job>>()>;
  // waiters must outlive the watch.
  QueueWatch(ListQueued list, LeaseWaiters* waiters, absl::Duration period);
  ~QueueWatch();  // Stops the thread.
  QueueWatch(const QueueWatch&) = delete;
  QueueWatch& operator=(const QueueWatch&) = delete;

  // A job queued in this process (already announced to the waiters). Returns false when it was
  // marked before.
  bool MarkAnnounced(const v1::Job& job);
  // One look at the queue (the thread's step; tests call it directly). Returns the jobs announced.
  int Look();

 private:
  void Loop();

  static constexpr size_t kRemembered = 16384;

  ListQueued list_;
  LeaseWaiters* waiters_;
  const absl::Duration period_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::unordered_set<std::string> announced_ ABSL_GUARDED_BY(mu_);  // "job id#attempts".
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);               // Oldest first, to forget.
  std::thread thread_;
};

}  // namespace kbench::server
