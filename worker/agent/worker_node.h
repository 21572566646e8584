// The worker's plain core, shared by the Worker service and the agent: its devices (one backend and
// one JobRunner each, all of one kind), catalog and identity (WorkerInfo), and the device leases
// that keep one job per device at a time and let a job be cancelled from another thread (a
// heartbeat, a shutdown). A node with several devices runs one job on each at once. The catalog is
// the one the first device's runner reported: this process loads no kernel library.
#pragma once

#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/worker.pb.h"
#include "worker/backend.h"
#include "worker/cancel.h"
#include "worker/runner/job_runner.h"

namespace kbench::kernels {
class Registry;
}

namespace kbench::worker {

struct WorkerConfig {
  std::string name;                           // Human name; default the host name (main.cc).
  std::map<std::string, std::string> labels;
  std::string address;                        // host:port of the Worker service, "" when none.
  std::string suite_version;
};

class WorkerNode;

// Exclusive use of one device while it lives; carries the running job's cancel flag.
class DeviceLease {
 public:
  ~DeviceLease();
  DeviceLease(const DeviceLease&) = delete;
  DeviceLease& operator=(const DeviceLease&) = delete;

  const CancelFlag& cancel() const { return cancel_; }
  void Cancel() { cancel_.Cancel(); }
  void set_job_id(const std::string& id);
  // Which of the node's devices this lease holds (WorkerNode::backend(i), runner(i)).
  int device_index() const { return device_; }

 private:
  friend class WorkerNode;
  DeviceLease(WorkerNode* node, int device) : node_(node), device_(device) {}
  WorkerNode* node_;
  const int device_;
  CancelFlag cancel_;
  std::string job_id_;  // Guarded by node_->mu_.
};

class WorkerNode {
 public:
  // Devices whose runners reported `catalog` (the first one's: all are of one kind); each backend
  // has a runner channel and should be calibrated already.
  WorkerNode(WorkerConfig config, std::vector<std::unique_ptr<Backend>> backends, std::vector<v1::OpInfo> catalog);
  // In a process that loads kernels (tests; agent/local_node.cc): backends in this process, each
  // given a runner in this process over `registry`'s ops for their kind. The registry must outlive the
  // node.
  WorkerNode(WorkerConfig config, std::vector<std::unique_ptr<Backend>> backends, const kernels::Registry& registry);
  // A node of one device, in this process.
  WorkerNode(WorkerConfig config, std::unique_ptr<Backend> backend, const kernels::Registry& registry);

  // Devices and calibrations in device order.
  v1::WorkerInfo Info() const;
  std::string worker_id() const;
  void set_worker_id(const std::string& id);
  void set_address(const std::string& address);

  const std::vector<v1::OpInfo>& catalog() const { return catalog_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  Backend& backend(int device = 0) { return *devices_.at(device)->backend; }
  JobRunner& runner(int device = 0) { return *devices_.at(device)->runner; }

  // A free device for one job (the lowest index); RESOURCE_EXHAUSTED while every device holds a
  // job, UNAVAILABLE after Shutdown().
  absl::StatusOr<std::unique_ptr<DeviceLease>> TryAcquireDevice();
  // Device `device`; RESOURCE_EXHAUSTED while it holds a job, OUT_OF_RANGE for no such device,
  // UNAVAILABLE after Shutdown().
  absl::StatusOr<std::unique_ptr<DeviceLease>> TryAcquireDevice(int device);
  // Called with the device's index each time TryAcquireDevice() (a direct job) takes a device: the
  // agent ends its long poll for that device. Null: nobody. Setting waits for a call in progress.
  void set_on_direct_acquire(std::function<void(int device)> hook);
  // Raises the cancel flag of the running job `job_id`, on whichever device runs it.
  void CancelJob(const std::string& job_id);
  // Cancels every running job and refuses new ones.
  void Shutdown();

 private:
  friend class DeviceLease;
  struct Device {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<JobRunner> runner;
    DeviceLease* current = nullptr;  // Guarded by mu_.
  };
  struct Parts {
    std::vector<std::unique_ptr<Backend>> backends;
    std::vector<v1::OpInfo> catalog;
  };
  WorkerNode(WorkerConfig config, Parts parts);
  // The local form's devices and catalog (agent/local_node.cc).
  static Parts LocalParts(std::vector<std::unique_ptr<Backend>> backends, const kernels::Registry& registry);
  static std::vector<std::unique_ptr<Backend>> One(std::unique_ptr<Backend> backend);
  absl::StatusOr<std::unique_ptr<DeviceLease>> AcquireLocked(int device);
  absl::StatusOr<std::unique_ptr<DeviceLease>> TryAcquireAnyDevice();
  void Release(DeviceLease* lease);

  const std::vector<std::unique_ptr<Device>> devices_;
  const std::vector<v1::OpInfo> catalog_;
  mutable std::mutex mu_;
  WorkerConfig config_;        // Guarded by mu_ (address changes once the server is up).
  std::string worker_id_;      // Guarded by mu_.
  bool shut_down_ = false;     // Guarded by mu_.
  std::mutex hook_mu_;         // Held while the hook runs or changes (not mu_: the hook takes the agent's lock).
  std::function<void(int)> on_direct_acquire_;  // Guarded by hook_mu_.
};

}  // namespace kbench::worker
