// CallPool: a queue under a mutex and N threads waiting on it.
#include "server/service/call_pool.h"

#include <algorithm>
#include <utility>

namespace kbench::server {

CallPool::CallPool(int threads) {
  const int n = std::max(1, threads);
  threads_.reserve(n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Loop(); });
}

CallPool::~CallPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void CallPool::Run(Task task) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(task));
}

size_t CallPool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void CallPool::Loop() {
  for (;;) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // Stopping, and nothing left to run.
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::move(task)();
  }
}

}  // namespace kbench::server
