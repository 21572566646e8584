// A cancellation flag shared between whoever runs a job (service, agent) and the code measuring it.
// Checked between samples and between items; it never interrupts a kernel that is running.
#pragma once

#include <atomic>

namespace kbench::worker {

class CancelFlag {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace kbench::worker
