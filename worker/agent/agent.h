// The agent: the worker's client side of the Coordinator service. It registers (retrying while the
// coordinator is unreachable), heartbeats at the interval the coordinator asks for (registering
// again when the coordinator has forgotten the worker, e.g. a restart on a new database), leases
// jobs, runs them with the JobRunner, reports each result as it comes (LeaseReporter: results the
// coordinator did not acknowledge go again with the next report) and completes the job. Drain()
// (kbench-worker's first SIGTERM) stops leasing once the running jobs are completed.
// One lease loop per device of the node, each asking for jobs its own device can run: a worker of
// several GPUs runs one job on each at once, and a fault on one device's runner leaves the others'.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/channel.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "worker/agent/backoff.h"
#include "worker/plugin/plugin_cache.h"
#include "worker/plugin/plugin_libraries.h"
#include "worker/agent/worker_node.h"

namespace kbench::worker {

struct AgentConfig {
  api::ChannelOptions coordinator;
  std::chrono::milliseconds rpc_timeout{10'000};
  // While the coordinator is unreachable or failing.
  std::chrono::milliseconds retry_initial{100}, retry_max{5'000};
  // While there is nothing to lease.
  std::chrono::milliseconds idle_initial{200}, idle_max{1'000};
  // LeaseJob's long poll (LeaseJobRequest.wait_ms): the coordinator holds an empty lease call this
  // long and answers as soon as a job is queued; 0 (or a coordinator that does not hold calls):
  // poll with the idle backoff above. The device stays free for direct jobs meanwhile, and a direct
  // job ends the poll.
  std::chrono::milliseconds lease_wait{10'000};
  // Used when the coordinator does not say.
  std::chrono::milliseconds default_heartbeat{5'000};
  // Called after each successful registration with the worker id (a new one after re-registration).
  std::function<void(const std::string& worker_id)> on_registered;
  // Kernel plugins fetched from the coordinator (worker/plugin/plugin_cache.h); empty: a folder in
  // the temporary directory.
  std::string plugin_cache_dir;
  int64_t max_plugin_bytes = int64_t{256} << 20;
};

class Agent {
 public:
  Agent(AgentConfig config, WorkerNode& node);
  ~Agent();  // Stop()s.
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  void Start();
  // Returns promptly: wakes every wait, cancels in-flight calls and the running job (abandoned: its
  // lease expires and the coordinator queues it again), joins the threads.
  void Stop();
  // Stops leasing: every job already leased (running, or granted by a LeaseJob call answered before
  // the drain) runs to its end and is reported and completed as usual; no new one is leased, and a
  // long poll in flight is cancelled (a grant crossing that cancellation runs again once its lease
  // expires). Heartbeats go on until Stop(). Returns at once; WaitDrained() says when every lease
  // loop has ended.
  void Drain();
  // Blocks until every lease loop has ended after Drain() (true), or until Stop() (false unless it
  // had drained before).
  bool WaitDrained();

  std::string worker_id() const;

 private:
  // The id a call is made under, with the registration it came from: a NOT_FOUND answered to a call
  // of an older registration must not undo a newer one that got the same id back.
  struct Registration {
    std::string id;
    uint64_t generation = 0;
  };
  Registration registration() const;
  // Leases and runs jobs for the node's device `device_index`, one at a time.
  void LeaseLoop(int device_index);
  void HeartbeatLoop();
  // Registers unless registered; retries with backoff. False when stopping (or draining, with
  // `wake_on_drain`).
  bool EnsureRegistered(bool wake_on_drain = false);
  // The coordinator no longer knows `r`: the next EnsureRegistered registers again, unless a
  // registration after `r` already has.
  void Forget(const Registration& r);
  void RunLeased(const v1::LeaseJobResponse& lease, DeviceLease& device);
  // GetPlugin from the coordinator, written piece by piece (a PluginFetcher).
  absl::Status FetchPlugin(const std::string& sha256, const std::function<absl::Status(absl::string_view)>& write);
  // Waits up to d or until Stop() (or Drain(), with `wake_on_drain`); false when stopping (or draining).
  bool WaitFor(std::chrono::milliseconds d, bool wake_on_drain = false);
  bool stopping() const;
  bool draining() const;

  // Runs one call with a context that Stop() can cancel.
  template <class Fn>
  grpc::Status Call(Fn&& fn, std::chrono::milliseconds extra_deadline = std::chrono::milliseconds(0),
                    int poll_of_device = -1);
  // Cancels the long poll of `device` in flight, if any (a direct job took the device; -1: all, Drain()).
  void CancelPolls(int device);
  // The device again after a long poll granted `leased`, kept alive while a direct job that took the
  // device meanwhile finishes; null when stopping or the lease was lost.
  std::unique_ptr<DeviceLease> DeviceForLease(int device_index, const v1::LeaseJobResponse& leased);

  const AgentConfig config_;
  WorkerNode& node_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  PluginCache plugin_cache_;
  // Where a job's plugins come from (plugin/plugin_libraries.h), one per device: each asks its
  // device's runner child; null for a device whose runner is in this process (tests).
  std::vector<std::unique_ptr<RunnerPluginLibraries>> plugin_libraries_;

  std::mutex register_mu_;  // One registration at a time (lease loop and heartbeat may both need it).
  std::string last_register_error_;  // Guarded by register_mu_: the last failure said, said once.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                      // Guarded by mu_.
  bool draining_ = false;                      // Guarded by mu_.
  bool drained_ = false;                       // Guarded by mu_. Every lease loop ended while draining.
  int lease_loops_ = 0;                        // Guarded by mu_. Lease loops not yet ended.
  std::string worker_id_;                      // Guarded by mu_. Empty: not registered.
  std::string last_id_;                        // Guarded by mu_. Asked for again on re-registration.
  uint64_t generation_ = 0;                    // Guarded by mu_. Successful registrations so far.
  std::chrono::milliseconds heartbeat_{5'000};  // Guarded by mu_.
  std::set<grpc::ClientContext*> in_flight_;   // Guarded by mu_.
  std::map<int, grpc::ClientContext*> polls_;  // Guarded by mu_. Long polls in flight, by device.
  std::set<DeviceLease*> running_;             // Guarded by mu_. One per device at most.
  std::vector<std::thread> lease_threads_;
  std::thread heartbeat_thread_;
};

}  // namespace kbench::worker
