// LeaseJob's long poll (LeaseJobRequest.wait_ms): a call that found no job for its worker waits here,
// holding no thread, until a job that worker can run is queued (it is then woken to lease again),
// its wait runs out, its caller cancels, or the coordinator shuts down. A queued job wakes one
// waiter, the one waiting longest whose registration can run it (matching.h's WorkerCanRun, in
// memory): a thousand idle workers cost a thousand parked calls, not a thousand polls a second.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::server {

class LeaseWaiters {
 public:
  enum class Wake {
    kJobQueued,  // A job the waiter's worker can run was queued: lease again.
    kTimedOut,   // The wait ran out: answer "not granted".
    kCancelled,  // The caller cancelled the call.
    kClosed,     // The coordinator is shutting down.
  };
  struct Waiter {
    const void* key = nullptr;                     // Names the call for Cancel.
    std::shared_ptr<const v1::WorkerInfo> worker;  // The registration its lease was matched against.
    absl::Time deadline;
    const std::atomic<bool>* cancelled = nullptr;  // Set by the caller's cancellation; may be null.
    // Runs exactly once, with why it ended, on the thread that woke it (never under the lock);
    // with kJobQueued, the job's spec.
    absl::AnyInvocable<void(Wake why, std::shared_ptr<const v1::JobSpec> queued) &&> resume;
  };
  enum class Parked {
    kYes,
    kRetry,      // A job the worker can run was queued since `seen` (epoch()): lease again at once.
    kCancelled,  // *cancelled was already set.
    kClosed,
  };

  LeaseWaiters();  // Starts the thread that ends waits at their deadline.
  ~LeaseWaiters();  // Close()s and joins it.
  LeaseWaiters(const LeaseWaiters&) = delete;
  LeaseWaiters& operator=(const LeaseWaiters&) = delete;

  // Jobs queued so far: read before the lease attempt whose empty answer leads to Park.
  uint64_t epoch() const;
  // Parks *w (moved from only when kYes) unless a job its worker can run was queued since `seen`.
  Parked Park(Waiter* w, uint64_t seen);
  // A job was queued (submitted, or back after its lease expired): wakes the longest waiter whose
  // worker can run it.
  void JobQueued(const v1::JobSpec& spec);
  // The call `key` was cancelled: resumes it with kCancelled if it is parked.
  void Cancel(const void* key);
  // Resumes every waiter with kClosed; later Park calls answer kClosed.
  void Close();
  size_t parked() const;

 private:
  void TimerLoop();
  // Removes the waiter parked as `seq` and returns it.
  Waiter TakeLocked(uint64_t seq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Queued jobs remembered for Park's check against `seen`; an older `seen` retries.
  static constexpr size_t kRecentJobs = 256;

  mutable absl::Mutex mu_;
  absl::CondVar timer_cv_;  // An earlier deadline, or Close().
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::shared_ptr<const v1::JobSpec>> recent_ ABSL_GUARDED_BY(mu_);  // Epochs epoch_-size+1 .. epoch_.
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, Waiter> waiters_ ABSL_GUARDED_BY(mu_);                 // By seq: longest waiting first.
  std::multimap<absl::Time, uint64_t> deadlines_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<const void*, uint64_t> by_key_ ABSL_GUARDED_BY(mu_);
  std::thread timer_;
};

}  // namespace kbench::server
