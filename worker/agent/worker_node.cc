#include "worker/agent/worker_node.h"

#include <stdexcept>

#include "absl/strings/str_cat.h"

namespace kbench::worker {
namespace {

std::vector<std::unique_ptr<Backend>> Checked(std::vector<std::unique_ptr<Backend>> backends) {
  // A programming error, not bad input: main.cc makes at least one backend, all of one kind.
  if (backends.empty()) throw std::invalid_argument("WorkerNode: no device");
  for (const auto& b : backends)
    if (b == nullptr || b->kind() != backends.front()->kind())
      throw std::invalid_argument("WorkerNode: the devices of one worker must be of one kind");
  return backends;
}

}  // namespace

DeviceLease::~DeviceLease() { node_->Release(this); }

void DeviceLease::set_job_id(const std::string& id) {
  std::lock_guard<std::mutex> lock(node_->mu_);
  job_id_ = id;
}

std::vector<std::unique_ptr<Backend>> WorkerNode::One(std::unique_ptr<Backend> backend) {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(std::move(backend));
  return v;
}

WorkerNode::WorkerNode(WorkerConfig config, std::vector<std::unique_ptr<Backend>> backends,
                       std::vector<v1::OpInfo> catalog)
    : WorkerNode(std::move(config), Parts{std::move(backends), std::move(catalog)}) {}

WorkerNode::WorkerNode(WorkerConfig config, Parts parts)
    : devices_([&] {
        std::vector<std::unique_ptr<Device>> devices;
        for (auto& b : Checked(std::move(parts.backends))) {
          devices.push_back(std::make_unique<Device>());
          devices.back()->backend = std::move(b);
        }
        return devices;
      }()),
      catalog_(std::move(parts.catalog)),
      config_(std::move(config)) {
  for (const auto& d : devices_) d->runner = std::make_unique<JobRunner>(catalog_, *d->backend);
}

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
  for (const auto& d : devices_) {
    *info.add_devices() = d->backend->device();
    if (d->backend->calibration()) *info.add_calibrations() = *d->backend->calibration();
  }
  for (const v1::OpInfo& op : catalog_) *info.add_catalog() = op;
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

absl::StatusOr<std::unique_ptr<DeviceLease>> WorkerNode::AcquireLocked(int device) {
  auto lease = std::unique_ptr<DeviceLease>(new DeviceLease(this, device));
  devices_[device]->current = lease.get();
  return lease;
}

void WorkerNode::set_on_direct_acquire(std::function<void(int device)> hook) {
  std::lock_guard<std::mutex> lock(hook_mu_);
  on_direct_acquire_ = std::move(hook);
}

absl::StatusOr<std::unique_ptr<DeviceLease>> WorkerNode::TryAcquireDevice() {
  absl::StatusOr<std::unique_ptr<DeviceLease>> lease = TryAcquireAnyDevice();
  if (lease.ok()) {
    std::lock_guard<std::mutex> lock(hook_mu_);
    if (on_direct_acquire_) on_direct_acquire_((*lease)->device_index());
  }
  return lease;
}

absl::StatusOr<std::unique_ptr<DeviceLease>> WorkerNode::TryAcquireAnyDevice() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return absl::UnavailableError("the worker is shutting down");
  for (int i = 0; i < device_count(); ++i)
    if (devices_[i]->current == nullptr) return AcquireLocked(i);
  if (device_count() == 1)
    return absl::ResourceExhaustedError(
        absl::StrCat("the device is busy with job '", devices_[0]->current->job_id_, "'; one job at a time"));
  return absl::ResourceExhaustedError(
      absl::StrCat("all ", device_count(), " devices are busy; one job per device at a time"));
}

absl::StatusOr<std::unique_ptr<DeviceLease>> WorkerNode::TryAcquireDevice(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return absl::UnavailableError("the worker is shutting down");
  if (device < 0 || device >= device_count())
    return absl::OutOfRangeError(absl::StrCat("no device ", device, "; this worker has ", device_count()));
  if (devices_[device]->current != nullptr)
    return absl::ResourceExhaustedError(absl::StrCat("device ", device, " is busy with job '",
                                                     devices_[device]->current->job_id_, "'; one job at a time"));
  return AcquireLocked(device);
}

void WorkerNode::CancelJob(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& d : devices_)
    if (d->current != nullptr && d->current->job_id_ == job_id) d->current->Cancel();
}

void WorkerNode::Shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  for (const auto& d : devices_)
    if (d->current != nullptr) d->current->Cancel();
}

void WorkerNode::Release(DeviceLease* lease) {
  std::lock_guard<std::mutex> lock(mu_);
  Device& d = *devices_[lease->device_];
  if (d.current == lease) d.current = nullptr;
}

}  // namespace kbench::worker
