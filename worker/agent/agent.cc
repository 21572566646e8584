#include "worker/agent/agent.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "worker/agent/lease_reporter.h"

namespace kbench::worker {
namespace {

// api::MakeChannel, plus a short reconnect backoff: gRPC's default grows to two minutes, and a
// worker must find a restarted coordinator within about a second, not minutes later.
// TLS as the options say; credentials that cannot be made (a missing PEM file) give a channel whose
// calls all fail, never plaintext (kbench-worker checks them before starting the agent).
std::shared_ptr<grpc::Channel> CoordinatorChannel(const api::ChannelOptions& options) {
  grpc::ChannelArguments args = api::MakeChannelArguments(options);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = api::MakeChannelCredentials(options);
  return grpc::CreateCustomChannel(options.address, credentials.ok() ? *credentials : nullptr, args);
}

std::string PluginCacheDir(const AgentConfig& config) {
  if (!config.plugin_cache_dir.empty()) return config.plugin_cache_dir;
  return absl::StrCat(std::filesystem::temp_directory_path().string(), "/kbench-plugins-", getuid());
}

}  // namespace

Agent::Agent(AgentConfig config, WorkerNode& node)
    : config_(std::move(config)),
      node_(node),
      stub_(v1::Coordinator::NewStub(CoordinatorChannel(config_.coordinator))),
      plugin_cache_(PluginCacheDir(config_), config_.max_plugin_bytes),
      heartbeat_(config_.default_heartbeat) {
  for (int i = 0; i < node_.device_count(); ++i) {
    RunnerChannel* runner = node_.backend(i).runner_channel();
    plugin_libraries_.push_back(
        runner == nullptr || !runner->child_process()
            ? nullptr
            : std::make_unique<RunnerPluginLibraries>(
                  *runner, plugin_cache_,
                  [this](const std::string& sha, const std::function<absl::Status(absl::string_view)>& write) {
                    return FetchPlugin(sha, write);
                  }));
  }
}

absl::Status Agent::FetchPlugin(const std::string& sha256,
                                const std::function<absl::Status(absl::string_view)>& write) {
  // A plugin of hundreds of MiB takes longer than an ordinary call.
  std::unique_ptr<grpc::ClientContext> ctx = api::MakeContext(config_.coordinator, std::chrono::minutes(10));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::CancelledError("the agent is stopping");
    in_flight_.insert(ctx.get());
  }
  v1::GetPluginRequest request;
  request.set_sha256(sha256);
  std::unique_ptr<grpc::ClientReader<v1::PluginChunk>> reader = stub_->GetPlugin(ctx.get(), request);
  v1::PluginChunk chunk;
  absl::Status written = absl::OkStatus();
  while (written.ok() && reader->Read(&chunk)) written = write(chunk.data());
  if (!written.ok()) ctx->TryCancel();
  grpc::Status s = reader->Finish();
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(ctx.get());
  }
  if (!written.ok()) return written;
  return api::FromGrpc(s);
}

Agent::~Agent() { Stop(); }

void Agent::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    lease_loops_ = node_.device_count();
  }
  node_.set_on_direct_acquire([this](int device) { CancelPolls(device); });
  for (int i = 0; i < node_.device_count(); ++i) lease_threads_.emplace_back([this, i] { LeaseLoop(i); });
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

void Agent::Stop() {
  node_.set_on_direct_acquire(nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (grpc::ClientContext* ctx : in_flight_) ctx->TryCancel();
    for (DeviceLease* device : running_) device->Cancel();
  }
  cv_.notify_all();
  for (std::thread& t : lease_threads_)
    if (t.joinable()) t.join();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

void Agent::Drain() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
  }
  cv_.notify_all();
  CancelPolls(-1);
}

bool Agent::WaitDrained() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return drained_ || stopping_; });
  return drained_;
}

std::string Agent::worker_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return worker_id_;
}

Agent::Registration Agent::registration() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {worker_id_, generation_};
}

bool Agent::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

bool Agent::draining() const {
  std::lock_guard<std::mutex> lock(mu_);
  return draining_;
}

bool Agent::WaitFor(std::chrono::milliseconds d, bool wake_on_drain) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [&] { return stopping_ || (wake_on_drain && draining_); });
  return !stopping_ && !(wake_on_drain && draining_);
}

template <class Fn>
grpc::Status Agent::Call(Fn&& fn, std::chrono::milliseconds extra_deadline, int poll_of_device) {
  std::unique_ptr<grpc::ClientContext> ctx =
      api::MakeContext(config_.coordinator, config_.rpc_timeout + extra_deadline);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return grpc::Status(grpc::StatusCode::CANCELLED, "the agent is stopping");
    if (poll_of_device >= 0 && draining_) return grpc::Status(grpc::StatusCode::CANCELLED, "the agent is draining");
    in_flight_.insert(ctx.get());
    if (poll_of_device >= 0) polls_[poll_of_device] = ctx.get();
  }
  grpc::Status s = fn(ctx.get());
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(ctx.get());
  if (poll_of_device >= 0) polls_.erase(poll_of_device);
  return s;
}

void Agent::CancelPolls(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [d, ctx] : polls_)
    if (device < 0 || d == device) ctx->TryCancel();
}

std::unique_ptr<DeviceLease> Agent::DeviceForLease(int device_index, const v1::LeaseJobResponse& leased) {
  Backoff wait(std::chrono::milliseconds(20), std::chrono::milliseconds(200));
  int64_t expires_ms = leased.lease_expires_unix_ms();
  for (;;) {
    absl::StatusOr<std::unique_ptr<DeviceLease>> device = node_.TryAcquireDevice(device_index);
    if (device.ok()) return *std::move(device);
    if (absl::IsUnavailable(device.status())) return nullptr;  // Shutting down.
    // A direct job took the device during the poll: keep the lease alive until the device is free
    // (an empty report extends it), once less than two thirds of a call's timeout (at least 3 s) is left.
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    if (expires_ms - now_ms < config_.rpc_timeout.count() * 2 / 3 || expires_ms - now_ms < 3'000) {
      v1::ReportProgressRequest request;
      request.set_lease_id(leased.lease_id());
      v1::ReportProgressResponse response;
      grpc::Status s = Call([&](grpc::ClientContext* ctx) { return stub_->ReportProgress(ctx, request, &response); });
      if (IsLeaseLost(s)) return nullptr;
      if (s.ok()) expires_ms = response.lease_expires_unix_ms();
    }
    if (!WaitFor(wait.Next())) return nullptr;
  }
}

bool Agent::EnsureRegistered(bool wake_on_drain) {
  std::lock_guard<std::mutex> registering(register_mu_);
  std::string previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || (wake_on_drain && draining_)) return false;
    if (!worker_id_.empty()) return true;
    previous = last_id_;
  }
  Backoff backoff(config_.retry_initial, config_.retry_max);
  while (!stopping()) {
    v1::RegisterWorkerRequest request;
    *request.mutable_info() = node_.Info();
    request.mutable_info()->set_worker_id(previous);
    v1::RegisterWorkerResponse response;
    grpc::Status s = Call([&](grpc::ClientContext* ctx) { return stub_->RegisterWorker(ctx, request, &response); });
    if (s.ok() && !response.worker_id().empty()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        worker_id_ = last_id_ = response.worker_id();
        ++generation_;
        heartbeat_ = response.heartbeat_interval_ms() > 0 ? std::chrono::milliseconds(response.heartbeat_interval_ms())
                                                          : config_.default_heartbeat;
      }
      node_.set_worker_id(response.worker_id());
      if (config_.on_registered) config_.on_registered(response.worker_id());
      return true;
    }
    // Said once per distinct reason: a refused registration (a catalog beyond a limit, say) would
    // otherwise retry in silence.
    if (const std::string why = absl::StrCat(static_cast<int>(s.error_code()), ": ", s.error_message());
        !s.ok() && why != last_register_error_) {
      last_register_error_ = why;
      std::cerr << "kbench-worker: registration failed (retrying): " << "code " << static_cast<int>(s.error_code()) << ": "
                << s.error_message() << std::endl;
    }
    if (!WaitFor(backoff.Next(), wake_on_drain)) return false;
  }
  return false;
}

void Agent::Forget(const Registration& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (generation_ == r.generation) worker_id_.clear();
}

void Agent::HeartbeatLoop() {
  while (EnsureRegistered()) {
    std::chrono::milliseconds interval;
    {
      std::lock_guard<std::mutex> lock(mu_);
      interval = heartbeat_;
    }
    if (!WaitFor(interval)) return;
    const Registration r = registration();
    if (r.id.empty()) continue;
    v1::HeartbeatRequest request;
    request.set_worker_id(r.id);
    v1::HeartbeatResponse response;
    grpc::Status s = Call([&](grpc::ClientContext* ctx) { return stub_->Heartbeat(ctx, request, &response); });
    if (s.ok()) {
      for (const std::string& job : response.cancelled_job_ids()) node_.CancelJob(job);
    } else if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
      Forget(r);
    }
    // Other errors (coordinator down): try again at the next interval.
  }
}

void Agent::LeaseLoop(int device_index) {
  // Whatever ends the loop: Drain() waits for every device's.
  struct Ended {
    Agent* agent;
    ~Ended() {
      {
        std::lock_guard<std::mutex> lock(agent->mu_);
        // Stop() abandons: not drained.
        if (--agent->lease_loops_ == 0) agent->drained_ = agent->draining_ && !agent->stopping_;
      }
      agent->cv_.notify_all();
    }
  } ended{this};
  // Waits that Drain() ends: between jobs there is nothing to finish.
  constexpr bool kWakeOnDrain = true;
  Backoff idle(config_.idle_initial, config_.idle_max);
  Backoff retry(config_.retry_initial, config_.retry_max);
  while (EnsureRegistered(kWakeOnDrain)) {
    absl::StatusOr<std::unique_ptr<DeviceLease>> device = node_.TryAcquireDevice(device_index);
    if (!device.ok()) {
      if (absl::IsUnavailable(device.status())) return;    // Shutting down.
      if (!WaitFor(idle.Next(), kWakeOnDrain)) return;      // A direct RunJob holds the device.
      continue;
    }
    if (draining()) return;
    const Registration r = registration();
    v1::LeaseJobRequest request;
    request.set_worker_id(r.id);
    // Only jobs this device can run: on a worker of several GPU models, a selector for one model.
    request.set_device_uuid(node_.backend(device_index).device().uuid());
    const bool long_poll = config_.lease_wait.count() > 0;
    if (long_poll) {
      request.set_wait_ms(static_cast<int32_t>(config_.lease_wait.count()));
      device->reset();  // Free for direct jobs while the coordinator holds the call.
    }
    v1::LeaseJobResponse response;
    grpc::Status s = Call([&](grpc::ClientContext* ctx) { return stub_->LeaseJob(ctx, request, &response); },
                          long_poll ? config_.lease_wait : std::chrono::milliseconds(0),
                          long_poll ? device_index : -1);
    if (!s.ok()) {
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) Forget(r);  // Registers again, next turn.
      // Ended by a direct job or Drain(): not the coordinator's fault. (A grant that crossed the
      // cancellation is run again after its lease expires.)
      if (s.error_code() == grpc::StatusCode::CANCELLED && !stopping()) continue;
      if (!WaitFor(retry.Next(), kWakeOnDrain)) return;
      continue;
    }
    retry.Reset();
    if (!response.granted()) {
      device->reset();  // Free the device for direct jobs while waiting.
      // Held for its wait: the coordinator did the waiting, ask again at once.
      if (long_poll && response.held_ms() > 0) {
        idle.Reset();
        continue;
      }
      if (!WaitFor(idle.Next(), kWakeOnDrain)) return;
      continue;
    }
    // Granted, even if Drain() came during the call: running it beats leaving it to its lease's expiry.
    idle.Reset();
    if (*device == nullptr) {
      std::unique_ptr<DeviceLease> again = DeviceForLease(device_index, response);
      if (again == nullptr) {
        if (stopping()) return;
        continue;  // The lease was lost while a direct job held the device.
      }
      *device = std::move(again);
    }
    RunLeased(response, **device);
  }
}

void Agent::RunLeased(const v1::LeaseJobResponse& leased, DeviceLease& device) {
  const v1::Job& job = leased.job();
  const std::string& lease_id = leased.lease_id();
  device.set_job_id(job.job_id());
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.insert(&device);
    if (stopping_) device.Cancel();
  }
  struct Unregister {
    Agent* agent;
    DeviceLease* device;
    ~Unregister() {
      std::lock_guard<std::mutex> lock(agent->mu_);
      agent->running_.erase(device);
    }
  } unregister{this, &device};
  JobRunner& runner = node_.runner(device.device_index());

  Backoff retry(config_.retry_initial, config_.retry_max);
  auto complete = [&](bool failed, const std::string& error) {
    v1::CompleteJobRequest request;
    request.set_lease_id(lease_id);
    request.set_failed(failed);
    request.set_error(error);
    while (!stopping()) {
      v1::CompleteJobResponse response;
      grpc::Status s = Call([&](grpc::ClientContext* ctx) { return stub_->CompleteJob(ctx, request, &response); });
      if (s.ok() || IsLeaseLost(s) || !WaitFor(retry.Next())) return;
    }
  };

  const JobContext context{.job_id = job.job_id(), .worker_id = worker_id(), .attempt = job.attempts()};
  // The one planner (plan/planner.h), with the plugins this job may bring fetched from the coordinator.
  absl::StatusOr<JobPlan> plan = runner.Plan(job.spec(), plugin_libraries_.at(device.device_index()).get());
  if (!plan.ok()) return complete(true, plan.status().ToString());
  LeaseReporter reporter(*stub_, [this](const auto& fn) { return Call(fn); }, leased, plan->results_total, device);
  runner.Run(*plan, context, device.cancel(), [&](const v1::RunJobEvent& e) { reporter.OnEvent(e); });
  // A lost lease: the coordinator has given the job to another attempt. Stopping: abandoned, and
  // re-queued when the lease expires.
  while (!reporter.lease_lost() && !reporter.Flush()) {
    if (!WaitFor(retry.Next())) return;
  }
  if (reporter.lease_lost() || stopping()) return;
  if (const std::string refused = reporter.refused(); !refused.empty())
    return complete(true, "the coordinator refused this worker's report: " + refused);
  complete(false, "");
}

}  // namespace kbench::worker
