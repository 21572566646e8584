// Reports one leased job to the coordinator: progress before each item, each result as it comes
// (every result not yet acknowledged goes again with the next report, so an outage loses none),
// and a keep-alive report while a long item runs, since only reports extend a lease. Notices a
// cancelled job and a lost lease, and raises the device's cancel flag for either.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "worker/agent/worker_node.h"

namespace kbench::worker {

// FAILED_PRECONDITION or NOT_FOUND from ReportProgress or CompleteJob: the lease is gone (expired
// and re-queued, or the coordinator forgot it); stop, and report nothing more.
bool IsLeaseLost(const grpc::Status& s);

class LeaseReporter {
 public:
  // Runs one call with a context the caller can cancel (Agent::Call).
  using CallFn = std::function<grpc::Status(const std::function<grpc::Status(grpc::ClientContext*)>&)>;

  // Starts the keep-alive thread. The stub, the device and `call` must outlive the reporter.
  LeaseReporter(v1::Coordinator::StubInterface& stub, CallFn call, const v1::LeaseJobResponse& lease,
                int32_t results_total, DeviceLease& device);
  ~LeaseReporter();  // Stops the keep-alive thread.
  LeaseReporter(const LeaseReporter&) = delete;
  LeaseReporter& operator=(const LeaseReporter&) = delete;

  // The job runner's events; each one is reported at once.
  void OnEvent(const v1::RunJobEvent& event);
  // Reports the progress (current cleared) and any unacknowledged results once more. True when
  // nothing is left to send.
  bool Flush();

  bool lease_lost() const;
  // Why the coordinator refused a report as invalid (INVALID_ARGUMENT), or "": such results can never
  // be stored, so they are dropped, the job is stopped, and the agent completes it as failed.
  std::string refused() const;
  bool has_pending() const;

 private:
  // Sends progress, and the pending results when with_results; handles the answer.
  void Report(bool with_results);
  void KeepAlive();

  v1::Coordinator::StubInterface& stub_;
  const CallFn call_;
  const std::string lease_id_;
  DeviceLease& device_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  v1::Progress progress_;             // Guarded by mu_.
  std::vector<v1::Result> pending_;   // Guarded by mu_. Finished, not acknowledged.
  bool lost_ = false;                 // Guarded by mu_.
  std::string refused_;               // Guarded by mu_.
  bool done_ = false;                 // Guarded by mu_.
  int64_t expires_unix_ms_ = 0;       // Guarded by mu_.
  std::chrono::steady_clock::time_point last_report_;  // Guarded by mu_.
  std::mutex send_mu_;                // One report in flight at a time, so reports stay in order.
  std::thread keeper_;
};

}  // namespace kbench::worker
