// The Coordinator gRPC service: a thin adapter that turns requests into Coordinator calls and their
// results (or absl::Status errors, via api::ToGrpc) into responses.
#pragma once

#include <functional>
#include <string>

#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/coordinator/coordinator.h"
#include "server/store/plugin_store.h"
#include "server/service/request_gate.h"

namespace kbench::server {

class CoordinatorService final : public v1::Coordinator::Service {
 public:
  // coordinator (and gate, when given) must outlive the service. With a gate, each call passes it,
  // and calls after it closed fail UNAVAILABLE.
  explicit CoordinatorService(Coordinator* coordinator, RequestGate* gate = nullptr)
      : coordinator_(coordinator), gate_(gate) {}

  grpc::Status Submit(grpc::ServerContext*, const v1::SubmitRequest* req, v1::SubmitResponse* resp) override;
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* req, v1::Job* resp) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* req, v1::ListJobsResponse* resp) override;
  grpc::Status CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* req, v1::CancelJobResponse* resp) override;
  grpc::Status GetResults(grpc::ServerContext*, const v1::GetResultsRequest* req,
                          v1::GetResultsResponse* resp) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest* req,
                           v1::ListWorkersResponse* resp) override;
  grpc::Status ListKernels(grpc::ServerContext*, const v1::ListKernelsRequest* req,
                           v1::ListKernelsResponse* resp) override;
  grpc::Status GetHistory(grpc::ServerContext*, const v1::GetHistoryRequest* req,
                          v1::GetHistoryResponse* resp) override;
  grpc::Status SetSeriesControl(grpc::ServerContext* context, const v1::SetSeriesControlRequest* req,
                                v1::SetSeriesControlResponse* resp) override;
  grpc::Status ListSeriesControls(grpc::ServerContext*, const v1::ListSeriesControlsRequest* req,
                                  v1::ListSeriesControlsResponse* resp) override;
  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req, v1::HeartbeatResponse* resp) override;
  grpc::Status LeaseJob(grpc::ServerContext*, const v1::LeaseJobRequest* req, v1::LeaseJobResponse* resp) override;
  grpc::Status ReportProgress(grpc::ServerContext*, const v1::ReportProgressRequest* req,
                              v1::ReportProgressResponse* resp) override;
  grpc::Status CompleteJob(grpc::ServerContext*, const v1::CompleteJobRequest* req,
                           v1::CompleteJobResponse* resp) override;
  grpc::Status UploadPlugin(grpc::ServerContext*, grpc::ServerReader<v1::UploadPluginRequest>* reader,
                            v1::UploadPluginResponse* resp) override;
  grpc::Status GetPluginInfo(grpc::ServerContext*, const v1::GetPluginInfoRequest* req,
                             v1::GetPluginInfoResponse* resp) override;
  grpc::Status GetPlugin(grpc::ServerContext*, const v1::GetPluginRequest* req,
                         grpc::ServerWriter<v1::PluginChunk>* writer) override;

  // Where plugins are kept; without one the plugin rpcs answer FAILED_PRECONDITION. Must outlive the service.
  void set_plugin_store(const PluginStore* plugins) { plugins_ = plugins; }
  // Who is calling (the token's name), recorded with the admin controls; without one, "".
  void set_caller_name(std::function<std::string(const grpc::ServerContext&)> name) { caller_name_ = std::move(name); }

 private:
  // Runs body() when admitted by the gate.
  template <typename Body>
  grpc::Status Gated(Body body);

  Coordinator* coordinator_;
  RequestGate* gate_;
  const PluginStore* plugins_ = nullptr;
  std::function<std::string(const grpc::ServerContext&)> caller_name_;
};

}  // namespace kbench::server
