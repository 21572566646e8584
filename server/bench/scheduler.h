// The load generator's event loop: one thread runs tasks at their due time. The simulated workers
// and clients are state machines whose steps are tasks here, and whose calls are gRPC async calls
// whose completions post the next step back; so a thousand workers need no thousand threads, and
// each one's state is touched by this thread alone.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace kbench::load {

class Scheduler {
 public:
  using Clock = std::chrono::steady_clock;
  using Task = std::function<void()>;

  Scheduler();
  ~Scheduler();  // Stops; tasks not yet run are dropped.
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Thread-safe; callable from a task or from any other thread.
  void At(Clock::time_point due, Task task);
  void After(Clock::duration delay, Task task) { At(Clock::now() + delay, std::move(task)); }
  void Post(Task task) { At(Clock::time_point::min(), std::move(task)); }
  // Waits until every task queued so far (and those they queue) that is due by now has run, or none is left.
  void Stop();

 private:
  struct Entry {
    Clock::time_point due;
    uint64_t seq;  // FIFO among equal due times.
    Task task;
    bool operator>(const Entry& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  uint64_t seq_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kbench::load
