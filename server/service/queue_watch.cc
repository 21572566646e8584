#include "server/service/queue_watch.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace kbench::server {

QueueWatch::QueueWatch(ListQueued list, LeaseWaiters* waiters, absl::Duration period)
    : list_(std::move(list)), waiters_(waiters), period_(period), thread_([this] { Loop(); }) {}

QueueWatch::~QueueWatch() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

bool QueueWatch::MarkAnnounced(const v1::Job& job) {
  std::string key = absl::StrCat(job.job_id(), "#", job.attempts());
  absl::MutexLock lock(&mu_);
  if (!announced_.insert(key).second) return false;
  order_.push_back(std::move(key));
  if (order_.size() > kRemembered) {
    announced_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

int QueueWatch::Look() {
  absl::StatusOr<std::vector<v1::Job>> queued = list_();
  if (!queued.ok()) return 0;  // The store is away: the next period tries again.
  int announced = 0;
  for (const v1::Job& job : *queued)
    if (MarkAnnounced(job)) {
      waiters_->JobQueued(job.spec());
      ++announced;
    }
  return announced;
}

void QueueWatch::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stop), period_)) break;
    if (waiters_->parked() == 0) continue;
    mu_.Unlock();
    Look();
    mu_.Lock();
  }
}

}  // namespace kbench::server
