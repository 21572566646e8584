#include "server/service/lease_waiters.h"

#include <utility>
#include <vector>

#include "server/coordinator/matching.h"

namespace kbench::server {

LeaseWaiters::LeaseWaiters() : timer_([this] { TimerLoop(); }) {}

LeaseWaiters::~LeaseWaiters() {
  Close();
  timer_.join();
}

uint64_t LeaseWaiters::epoch() const {
  absl::MutexLock lock(&mu_);
  return epoch_;
}

size_t LeaseWaiters::parked() const {
  absl::MutexLock lock(&mu_);
  return waiters_.size();
}

LeaseWaiters::Parked LeaseWaiters::Park(Waiter* w, uint64_t seen) {
  absl::MutexLock lock(&mu_);
  if (closed_) return Parked::kClosed;
  // Checked under the lock that Cancel takes after setting the flag: either this sees it, or Cancel
  // finds the waiter parked.
  if (w->cancelled != nullptr && w->cancelled->load()) return Parked::kCancelled;
  if (epoch_ != seen) {
    if (epoch_ - seen > recent_.size()) return Parked::kRetry;  // Too long ago to tell: try again.
    for (size_t i = recent_.size() - static_cast<size_t>(epoch_ - seen); i < recent_.size(); ++i)
      if (w->worker == nullptr || WorkerCanRun(*w->worker, *recent_[i])) return Parked::kRetry;
  }
  const uint64_t seq = next_seq_++;
  const bool earliest = deadlines_.empty() || w->deadline < deadlines_.begin()->first;
  deadlines_.emplace(w->deadline, seq);
  if (w->key != nullptr) by_key_[w->key] = seq;
  waiters_.emplace(seq, std::move(*w));
  if (earliest) timer_cv_.Signal();
  return Parked::kYes;
}

LeaseWaiters::Waiter LeaseWaiters::TakeLocked(uint64_t seq) {
  auto it = waiters_.find(seq);
  Waiter w = std::move(it->second);
  waiters_.erase(it);
  for (auto [d, end] = deadlines_.equal_range(w.deadline); d != end; ++d)
    if (d->second == seq) {
      deadlines_.erase(d);
      break;
    }
  if (w.key != nullptr) by_key_.erase(w.key);
  return w;
}

void LeaseWaiters::JobQueued(const v1::JobSpec& spec) {
  auto queued = std::make_shared<const v1::JobSpec>(spec);
  Waiter woken;
  {
    absl::MutexLock lock(&mu_);
    ++epoch_;
    recent_.push_back(queued);
    if (recent_.size() > kRecentJobs) recent_.pop_front();
    for (auto& [seq, w] : waiters_)
      if (w.worker == nullptr || WorkerCanRun(*w.worker, spec)) {
        woken = TakeLocked(seq);
        break;
      }
  }
  if (woken.resume) std::move(woken.resume)(Wake::kJobQueued, std::move(queued));
}

void LeaseWaiters::Cancel(const void* key) {
  Waiter w;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return;
    w = TakeLocked(it->second);
  }
  std::move(w.resume)(Wake::kCancelled, nullptr);
}

void LeaseWaiters::Close() {
  std::vector<Waiter> all;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    while (!waiters_.empty()) all.push_back(TakeLocked(waiters_.begin()->first));
    timer_cv_.Signal();
  }
  for (Waiter& w : all) std::move(w.resume)(Wake::kClosed, nullptr);
}

void LeaseWaiters::TimerLoop() {
  absl::MutexLock lock(&mu_);
  while (!closed_) {
    std::vector<Waiter> expired;
    const absl::Time now = absl::Now();
    while (!deadlines_.empty() && deadlines_.begin()->first <= now)
      expired.push_back(TakeLocked(deadlines_.begin()->second));
    if (!expired.empty()) {
      mu_.Unlock();
      for (Waiter& w : expired) std::move(w.resume)(Wake::kTimedOut, nullptr);
      mu_.Lock();
      continue;
    }
    if (deadlines_.empty()) timer_cv_.Wait(&mu_);
    else timer_cv_.WaitWithDeadline(&mu_, deadlines_.begin()->first);
  }
}

}  // namespace kbench::server
