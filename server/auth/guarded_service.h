// The Coordinator service behind the Authorizer: every rpc first checks the caller's bearer token
// (the `authorization` metadata) and, when allowed, calls the same rpc of the wrapped service;
// otherwise it answers the Authorizer's status and the wrapped service never sees the call. The
// Coordinator service uses gRPC's callback API: the check runs on gRPC's thread (a token lookup and
// a rate-limit bucket, no I/O), and an allowed call is handed to the wrapped service's reactor.
// (A wrapper rather than a gRPC interceptor: C++ server interceptors cannot refuse a call, and an
// AuthMetadataProcessor needs TLS.) An rpc added to the proto but not here answers UNIMPLEMENTED
// while tokens are on; the tests call every rpc of the service descriptor to catch that.
#pragma once

#include "kbench/v1/coordinator.grpc.pb.h"
#include "kbench/v1/worker.grpc.pb.h"
#include "server/auth/authorizer.h"

namespace kbench::server::auth {

class GuardedCoordinatorService final : public v1::Coordinator::CallbackService {
 public:
  // inner and authorizer must outlive this service.
  GuardedCoordinatorService(v1::Coordinator::CallbackService* inner, const Authorizer* authorizer)
      : inner_(inner), authorizer_(authorizer) {}

  using Reactor = grpc::ServerUnaryReactor;
  using Context = grpc::CallbackServerContext;
  Reactor* Submit(Context*, const v1::SubmitRequest*, v1::SubmitResponse*) override;
  Reactor* GetJob(Context*, const v1::GetJobRequest*, v1::Job*) override;
  Reactor* ListJobs(Context*, const v1::ListJobsRequest*, v1::ListJobsResponse*) override;
  Reactor* CancelJob(Context*, const v1::CancelJobRequest*, v1::CancelJobResponse*) override;
  Reactor* GetResults(Context*, const v1::GetResultsRequest*, v1::GetResultsResponse*) override;
  Reactor* ListWorkers(Context*, const v1::ListWorkersRequest*, v1::ListWorkersResponse*) override;
  Reactor* ListKernels(Context*, const v1::ListKernelsRequest*, v1::ListKernelsResponse*) override;
  Reactor* GetHistory(Context*, const v1::GetHistoryRequest*, v1::GetHistoryResponse*) override;
  Reactor* SetSeriesControl(Context*, const v1::SetSeriesControlRequest*, v1::SetSeriesControlResponse*) override;
  Reactor* ListSeriesControls(Context*, const v1::ListSeriesControlsRequest*, v1::ListSeriesControlsResponse*) override;
  Reactor* RegisterWorker(Context*, const v1::RegisterWorkerRequest*, v1::RegisterWorkerResponse*) override;
  Reactor* Heartbeat(Context*, const v1::HeartbeatRequest*, v1::HeartbeatResponse*) override;
  Reactor* LeaseJob(Context*, const v1::LeaseJobRequest*, v1::LeaseJobResponse*) override;
  Reactor* ReportProgress(Context*, const v1::ReportProgressRequest*, v1::ReportProgressResponse*) override;
  Reactor* CompleteJob(Context*, const v1::CompleteJobRequest*, v1::CompleteJobResponse*) override;
  Reactor* GetPluginInfo(Context*, const v1::GetPluginInfoRequest*, v1::GetPluginInfoResponse*) override;
  grpc::ServerReadReactor<v1::UploadPluginRequest>* UploadPlugin(Context*, v1::UploadPluginResponse*) override;
  grpc::ServerWriteReactor<v1::PluginChunk>* GetPlugin(Context*, const v1::GetPluginRequest*) override;

 private:
  // OK when the call may go on; else the status to answer.
  grpc::Status Check(const grpc::ServerContextBase* context, absl::string_view method) const;

  v1::Coordinator::CallbackService* inner_;
  const Authorizer* authorizer_;
};

// The Worker service of a worker that takes jobs straight from a caller, behind the same
// Authorizer: rules by gRPC path ("/kbench.v1.Worker/RunJob").
class GuardedWorkerService final : public v1::Worker::Service {
 public:
  // inner and authorizer must outlive this service.
  GuardedWorkerService(v1::Worker::Service* inner, const Authorizer* authorizer)
      : inner_(inner), authorizer_(authorizer) {}

  grpc::Status GetInfo(grpc::ServerContext*, const v1::GetInfoRequest*, v1::WorkerInfo*) override;
  grpc::Status RunJob(grpc::ServerContext*, const v1::RunJobRequest*, grpc::ServerWriter<v1::RunJobEvent>*) override;

 private:
  v1::Worker::Service* inner_;
  const Authorizer* authorizer_;
};

// The Authorizer's decision on a call of `method`, from its `authorization` metadata.
grpc::Status CheckCall(const Authorizer& authorizer, const grpc::ServerContextBase* context, absl::string_view method);
// The name of the token a call carries; "" without a known one.
std::string CallerName(const Authorizer& authorizer, const grpc::ServerContextBase& context);

}  // namespace kbench::server::auth
