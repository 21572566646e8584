#include "worker/worker_node.h"

#include "absl/strings/str_cat.h"

namespace kbench::worker {

DeviceLease::~DeviceLease() { node_->Release(this); }

void DeviceLease::set_job_id(const std::string& id) {
  std::lock_guard<std::mutex> lock(node_->mu_);
  job_id_ = id;
}

WorkerNode::WorkerNode(WorkerConfig config, std::unique_ptr<Backend> backend, const kernels::Registry& registry)
    : backend_(std::move(backend)),
      catalog_(registry, {backend_->kind()}),
      runner_(catalog_, *backend_),
      config_(std::move(config)) {}

v1::WorkerInfo WorkerNode::Info() const {
  v1::WorkerInfo info;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info.set_worker_id(worker_id_);
    info.set_name(config_.name);
    info.set_address(config_.address);
    info.mutable_labels()->insert(config_.labels.begin(), config_.labels.end());
    info.set_suite_version(config_.suite_version);
  }
  *info.add_devices() = backend_->device();
  if (backend_->calibration()) *info.add_calibrations() = *backend_->calibration();
  for (const v1::OpInfo& op : catalog_.ops()) *info.add_catalog() = op;
  return info;
}

std::string WorkerNode::worker_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return worker_id_;
}

void WorkerNode::set_worker_id(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  worker_id_ = id;
}

void WorkerNode::set_address(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  config_.address = address;
}

absl::StatusOr<std::unique_ptr<DeviceLease>> WorkerNode::TryAcquireDevice() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return absl::UnavailableError("the worker is shutting down");
  if (current_ != nullptr)
    return absl::ResourceExhaustedError(
        absl::StrCat("the device is busy with job '", current_->job_id_, "'; one job at a time"));
  auto lease = std::unique_ptr<DeviceLease>(new DeviceLease(this));
  current_ = lease.get();
  return lease;
}

void WorkerNode::CancelJob(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_ != nullptr && current_->job_id_ == job_id) current_->Cancel();
}

void WorkerNode::Shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  if (current_ != nullptr) current_->Cancel();
}

void WorkerNode::Release(DeviceLease* lease) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_ == lease) current_ = nullptr;
}

}  // namespace kbench::worker
