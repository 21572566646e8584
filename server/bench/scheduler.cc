// The event loop: a priority queue of due times, one thread.
#include "server/bench/scheduler.h"

namespace kbench::load {

Scheduler::Scheduler() : thread_([this] { Loop(); }) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::At(Clock::time_point due, Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push(Entry{due, seq_++, std::move(task)});
  }
  cv_.notify_one();
}

void Scheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Scheduler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const Clock::time_point due = queue_.top().due;
    if (due > Clock::now()) {
      cv_.wait_until(lock, due);
      continue;
    }
    Task task = std::move(const_cast<Entry&>(queue_.top()).task);
    queue_.pop();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace kbench::load
