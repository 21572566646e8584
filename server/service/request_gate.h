// Counts the requests in progress so that shutdown can refuse new ones, let the running ones finish,
// and then stop the gRPC server at once. (gRPC's Shutdown(deadline) alone also waits out the whole
// deadline whenever a client merely keeps an idle connection open, as every worker does.)
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kbench::server {

class RequestGate {
 public:
  // Admission of one request; leaves the gate when destroyed. False when the gate was closed.
  class Pass {
   public:
    Pass(Pass&& other) noexcept : gate_(other.gate_), admitted_(other.admitted_) { other.gate_ = nullptr; }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    Pass& operator=(Pass&&) = delete;
    ~Pass();
    explicit operator bool() const { return admitted_; }

   private:
    friend class RequestGate;
    Pass(RequestGate* gate, bool admitted) : gate_(gate), admitted_(admitted) {}
    RequestGate* gate_;  // Null when there is nothing to leave.
    bool admitted_;
  };

  Pass Enter();
  // Refuses every later Enter and waits until no admitted request remains, or timeout passes.
  // True when drained.
  bool CloseAndDrain(absl::Duration timeout);

 private:
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int in_progress_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kbench::server
