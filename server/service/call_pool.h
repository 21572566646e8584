// A fixed set of threads that runs the coordinator's rpc handlers. gRPC's callback server calls a
// handler on one of its own few threads, which must not block; the coordinator's calls block on the
// store (SQLite's lock, a PostgreSQL round trip, an fsync), so the service hands each call's work to
// this pool and the gRPC thread goes back to the network. A few threads are enough: the store
// serializes writers anyway, and a thread per call in flight (the sync server's model) cost more
// in scheduling and allocator contention than the store itself (server/README.md, Load).
#pragma once

#include <cstddef>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace kbench::server {

class CallPool {
 public:
  using Task = absl::AnyInvocable<void() &&>;

  explicit CallPool(int threads);  // At least one thread.
  // Runs every task already queued, then joins the threads.
  ~CallPool();
  CallPool(const CallPool&) = delete;
  CallPool& operator=(const CallPool&) = delete;

  // Queues task; one of the threads runs it, in the order queued.
  void Run(Task task);
  int threads() const { return static_cast<int>(threads_.size()); }
  // Tasks queued and not yet started (for tests and diagnostics).
  size_t queued() const;

 private:
  void Loop();

  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace kbench::server
