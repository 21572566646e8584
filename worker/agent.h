// The agent: the worker's client side of the Coordinator service. It registers (retrying while the
// coordinator is unreachable), heartbeats at the interval the coordinator asks for (registering
// again when the coordinator has forgotten the worker, e.g. a restart on a new database), leases
// jobs, runs them with the JobRunner, reports each result as it comes (LeaseReporter: results the
// coordinator did not acknowledge go again with the next report) and completes the job. Drain()
// (kbench-worker's first SIGTERM) stops leasing once the running job is completed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "api/channel.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "worker/backoff.h"
#include "worker/worker_node.h"

namespace kbench::worker {

struct AgentConfig {
  api::ChannelOptions coordinator;
  std::chrono::milliseconds rpc_timeout{10'000};
  // While the coordinator is unreachable or failing.
  std::chrono::milliseconds retry_initial{100}, retry_max{5'000};
  // While there is nothing to lease.
  std::chrono::milliseconds idle_initial{200}, idle_max{1'000};
  // Used when the coordinator does not say.
  std::chrono::milliseconds default_heartbeat{5'000};
  // Called after each successful registration with the worker id (a new one after re-registration).
  std::function<void(const std::string& worker_id)> on_registered;
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
  // Stops leasing: a job already leased (running, or granted by a LeaseJob call in flight) runs to
  // its end and is reported and completed as usual; no new one is leased. Heartbeats go on until
  // Stop(). Returns at once; WaitDrained() says when the lease loop has ended.
  void Drain();
  // Blocks until the lease loop has ended after Drain() (true), or until Stop() (false unless it had
  // drained before).
  bool WaitDrained();

  std::string worker_id() const;

 private:
  void LeaseLoop();
  void HeartbeatLoop();
  // Registers unless registered; retries with backoff. False when stopping (or draining, with
  // `wake_on_drain`).
  bool EnsureRegistered(bool wake_on_drain = false);
  // The coordinator no longer knows `id`: the next EnsureRegistered registers again.
  void Forget(const std::string& id);
  void RunLeased(const v1::LeaseJobResponse& lease, DeviceLease& device);
  // Waits up to d or until Stop() (or Drain(), with `wake_on_drain`); false when stopping (or draining).
  bool WaitFor(std::chrono::milliseconds d, bool wake_on_drain = false);
  bool stopping() const;
  bool draining() const;

  // Runs one call with a context that Stop() can cancel.
  template <class Fn>
  grpc::Status Call(Fn&& fn);

  const AgentConfig config_;
  WorkerNode& node_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;

  std::mutex register_mu_;  // One registration at a time (lease loop and heartbeat may both need it).
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                      // Guarded by mu_.
  bool draining_ = false;                      // Guarded by mu_.
  bool drained_ = false;                       // Guarded by mu_. The lease loop ended while draining.
  std::string worker_id_;                      // Guarded by mu_. Empty: not registered.
  std::string last_id_;                        // Guarded by mu_. Asked for again on re-registration.
  std::chrono::milliseconds heartbeat_{5'000};  // Guarded by mu_.
  std::set<grpc::ClientContext*> in_flight_;   // Guarded by mu_.
  DeviceLease* running_ = nullptr;             // Guarded by mu_.
  std::thread lease_thread_, heartbeat_thread_;
};

}  // namespace kbench::worker
