// The Coordinator gRPC service: a thin adapter that turns requests into Coordinator calls and their
// results (or absl::Status errors, via api::ToGrpc) into responses. It uses gRPC's callback API:
// gRPC's few threads only hand each call to a small pool of the service's own (CallPool), which
// runs the Coordinator call (it blocks on the store) and finishes the call, so a fleet's thousand
// calls in flight no longer need a thousand threads.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/coordinator/coordinator.h"
#include "server/service/call_pool.h"
#include "server/service/lease_waiters.h"
#include "server/service/queue_watch.h"
#include "server/service/request_gate.h"
#include "server/store/plugin_store.h"

namespace kbench::server {

class CoordinatorService final : public v1::Coordinator::CallbackService {
 public:
  // Threads of the pool that runs the handlers, by default.
  static constexpr int kDefaultHandlerThreads = 8;

  // coordinator (and gate, when given) must outlive the service, and the gRPC server must be shut
  // down before the service is destroyed. With a gate, each call passes it, and calls after it
  // closed fail UNAVAILABLE.
  // Hears of queued jobs from the coordinator (its long polls wake on them) until destroyed.
  // How often parked lease calls look for jobs queued by other coordinators on the same database.
  static constexpr absl::Duration kQueueWatchPeriod = absl::Milliseconds(500);
  explicit CoordinatorService(Coordinator* coordinator, RequestGate* gate = nullptr,
                              int handler_threads = kDefaultHandlerThreads,
                              absl::Duration queue_watch_period = kQueueWatchPeriod);
  ~CoordinatorService() override;

  using Reactor = grpc::ServerUnaryReactor;
  using Context = grpc::CallbackServerContext;
  Reactor* Submit(Context*, const v1::SubmitRequest* req, v1::SubmitResponse* resp) override;
  Reactor* GetJob(Context*, const v1::GetJobRequest* req, v1::Job* resp) override;
  Reactor* ListJobs(Context*, const v1::ListJobsRequest* req, v1::ListJobsResponse* resp) override;
  Reactor* CancelJob(Context*, const v1::CancelJobRequest* req, v1::CancelJobResponse* resp) override;
  Reactor* GetResults(Context*, const v1::GetResultsRequest* req, v1::GetResultsResponse* resp) override;
  Reactor* ListWorkers(Context*, const v1::ListWorkersRequest* req, v1::ListWorkersResponse* resp) override;
  Reactor* ListKernels(Context*, const v1::ListKernelsRequest* req, v1::ListKernelsResponse* resp) override;
  Reactor* GetHistory(Context*, const v1::GetHistoryRequest* req, v1::GetHistoryResponse* resp) override;
  Reactor* SetSeriesControl(Context* context, const v1::SetSeriesControlRequest* req,
                            v1::SetSeriesControlResponse* resp) override;
  Reactor* ListSeriesControls(Context*, const v1::ListSeriesControlsRequest* req,
                              v1::ListSeriesControlsResponse* resp) override;
  Reactor* RegisterWorker(Context*, const v1::RegisterWorkerRequest* req, v1::RegisterWorkerResponse* resp) override;
  Reactor* Heartbeat(Context*, const v1::HeartbeatRequest* req, v1::HeartbeatResponse* resp) override;
  Reactor* LeaseJob(Context*, const v1::LeaseJobRequest* req, v1::LeaseJobResponse* resp) override;
  Reactor* ReportProgress(Context*, const v1::ReportProgressRequest* req, v1::ReportProgressResponse* resp) override;
  Reactor* CompleteJob(Context*, const v1::CompleteJobRequest* req, v1::CompleteJobResponse* resp) override;
  Reactor* GetPluginInfo(Context*, const v1::GetPluginInfoRequest* req, v1::GetPluginInfoResponse* resp) override;
  // The plugin streams (plugin_streams.h).
  grpc::ServerReadReactor<v1::UploadPluginRequest>* UploadPlugin(Context*, v1::UploadPluginResponse* resp) override;
  grpc::ServerWriteReactor<v1::PluginChunk>* GetPlugin(Context*, const v1::GetPluginRequest* req) override;

  // Where plugins are kept; without one the plugin rpcs answer FAILED_PRECONDITION. Must outlive the service.
  void set_plugin_store(const PluginStore* plugins) { plugins_ = plugins; }
  // Who is calling (the token's name), recorded with the admin controls; without one, "".
  void set_caller_name(std::function<std::string(const grpc::ServerContextBase&)> name) {
    caller_name_ = std::move(name);
  }
  int handler_threads() const { return pool_.threads(); }
  // Answers every LeaseJob long poll now (UNAVAILABLE, as any call after shutdown) and every later
  // one at once: call before draining the gate, or the polls would hold the drain for their wait.
  void StopWaiting() { waiters_.Close(); }
  // LeaseJob calls waiting for a job (lease_waiters.h).
  size_t parked_leases() const { return waiters_.parked(); }

 private:
  // Admits the call through the gate (else finishes it UNAVAILABLE at once), then runs body() on
  // the pool and finishes the call with its status.
  template <typename Body>
  Reactor* Dispatch(Context* context, Body body);
  // The gate's pass for a streaming call; nullopt without a gate; a refused pass when closed.
  std::optional<RequestGate::Pass> Enter();
  // LeaseJob, long poll included (lease_poll.cc).
  class LeaseCall;
  // One lease attempt of `call` (on the pool); parks it when nothing matched and its wait is not over.
  void TryLease(LeaseCall* call);

  Coordinator* coordinator_;
  RequestGate* gate_;
  const PluginStore* plugins_ = nullptr;
  std::function<std::string(const grpc::ServerContextBase&)> caller_name_;
  LeaseWaiters waiters_;  // Before the pool: queued calls may still park while the pool drains.
  QueueWatch queue_watch_;  // After the waiters, which it wakes.
  CallPool pool_;  // Last: its threads stop (having run every queued call) before the rest goes.
};

}  // namespace kbench::server
