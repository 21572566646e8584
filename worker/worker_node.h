// The worker's plain core, shared by the Worker service and the agent: its backend, catalog and
// identity (WorkerInfo), and the device lease that keeps one job per device at a time and lets a
// job be cancelled from another thread (a heartbeat, a shutdown).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "core/registry.h"
#include "kbench/v1/worker.pb.h"
#include "worker/backend.h"
#include "worker/cancel.h"
#include "worker/catalog.h"
#include "worker/job_runner.h"

namespace kbench::worker {

struct WorkerConfig {
  std::string name;                           // Human name; default the host name (main.cc).
  std::map<std::string, std::string> labels;
  std::string address;                        // host:port of the Worker service, "" when none.
  std::string suite_version;
};

class WorkerNode;

// Exclusive use of the device while it lives; carries the running job's cancel flag.
class DeviceLease {
 public:
  ~DeviceLease();
  DeviceLease(const DeviceLease&) = delete;
  DeviceLease& operator=(const DeviceLease&) = delete;

  const CancelFlag& cancel() const { return cancel_; }
  void Cancel() { cancel_.Cancel(); }
  void set_job_id(const std::string& id);

 private:
  friend class WorkerNode;
  explicit DeviceLease(WorkerNode* node) : node_(node) {}
  WorkerNode* node_;
  CancelFlag cancel_;
  std::string job_id_;  // Guarded by node_->mu_.
};

class WorkerNode {
 public:
  // The registry must outlive the node; the backend should be calibrated already.
  WorkerNode(WorkerConfig config, std::unique_ptr<Backend> backend, const kernels::Registry& registry);

  v1::WorkerInfo Info() const;
  std::string worker_id() const;
  void set_worker_id(const std::string& id);
  void set_address(const std::string& address);

  const Catalog& catalog() const { return catalog_; }
  Backend& backend() { return *backend_; }
  JobRunner& runner() { return runner_; }

  // The device for one job; RESOURCE_EXHAUSTED while another job holds it, UNAVAILABLE after
  // Shutdown().
  absl::StatusOr<std::unique_ptr<DeviceLease>> TryAcquireDevice();
  // Raises the cancel flag of the running job if it is `job_id`.
  void CancelJob(const std::string& job_id);
  // Cancels the running job and refuses new ones.
  void Shutdown();

 private:
  friend class DeviceLease;
  void Release(DeviceLease* lease);

  const std::unique_ptr<Backend> backend_;
  const Catalog catalog_;
  JobRunner runner_;
  mutable std::mutex mu_;
  WorkerConfig config_;        // Guarded by mu_ (address changes once the server is up).
  std::string worker_id_;      // Guarded by mu_.
  DeviceLease* current_ = nullptr;  // Guarded by mu_.
  bool shut_down_ = false;     // Guarded by mu_.
};

}  // namespace kbench::worker
