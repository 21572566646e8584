// GuardedCoordinatorService and GuardedWorkerService: a check, then the wrapped rpc; see guarded_service.h.
#include "server/auth/guarded_service.h"

#include <utility>
#include <vector>

#include "api/channel.h"
#include "server/auth/refused_call.h"

namespace kbench::server::auth {

namespace {

std::vector<absl::string_view> AuthorizationOf(const grpc::ServerContextBase& context) {
  std::vector<absl::string_view> authorization;
  const auto range = context.client_metadata().equal_range("authorization");
  for (auto it = range.first; it != range.second; ++it)
    authorization.emplace_back(it->second.data(), it->second.size());
  return authorization;
}

}  // namespace

grpc::Status CheckCall(const Authorizer& authorizer, const grpc::ServerContextBase* context, absl::string_view method) {
  return api::ToGrpc(authorizer.Check(method, AuthorizationOf(*context)));
}

std::string CallerName(const Authorizer& authorizer, const grpc::ServerContextBase& context) {
  return authorizer.CallerName(AuthorizationOf(context));
}

grpc::Status GuardedCoordinatorService::Check(const grpc::ServerContextBase* context, absl::string_view method) const {
  return CheckCall(*authorizer_, context, method);
}

// Each rpc: the check under the rpc's own name, then the wrapped service's rpc; refused, the call
// is finished at once by its context's default reactor.
#define KBENCH_GUARDED_RPC(Method, Request, Response)                                                        \
  GuardedCoordinatorService::Reactor* GuardedCoordinatorService::Method(Context* context, const v1::Request* request, \
                                                                        v1::Response* response) {            \
    if (grpc::Status denied = Check(context, #Method); !denied.ok()) {                                       \
      Reactor* refused = context->DefaultReactor();                                                          \
      refused->Finish(std::move(denied));                                                                    \
      return refused;                                                                                        \
    }                                                                                                        \
    return inner_->Method(context, request, response);                                                       \
  }

KBENCH_GUARDED_RPC(Submit, SubmitRequest, SubmitResponse)
KBENCH_GUARDED_RPC(GetJob, GetJobRequest, Job)
KBENCH_GUARDED_RPC(ListJobs, ListJobsRequest, ListJobsResponse)
KBENCH_GUARDED_RPC(CancelJob, CancelJobRequest, CancelJobResponse)
KBENCH_GUARDED_RPC(GetResults, GetResultsRequest, GetResultsResponse)
KBENCH_GUARDED_RPC(ListWorkers, ListWorkersRequest, ListWorkersResponse)
KBENCH_GUARDED_RPC(ListKernels, ListKernelsRequest, ListKernelsResponse)
KBENCH_GUARDED_RPC(GetHistory, GetHistoryRequest, GetHistoryResponse)
KBENCH_GUARDED_RPC(SetSeriesControl, SetSeriesControlRequest, SetSeriesControlResponse)
KBENCH_GUARDED_RPC(ListSeriesControls, ListSeriesControlsRequest, ListSeriesControlsResponse)
KBENCH_GUARDED_RPC(RegisterWorker, RegisterWorkerRequest, RegisterWorkerResponse)
KBENCH_GUARDED_RPC(Heartbeat, HeartbeatRequest, HeartbeatResponse)
KBENCH_GUARDED_RPC(LeaseJob, LeaseJobRequest, LeaseJobResponse)
KBENCH_GUARDED_RPC(ReportProgress, ReportProgressRequest, ReportProgressResponse)
KBENCH_GUARDED_RPC(CompleteJob, CompleteJobRequest, CompleteJobResponse)
KBENCH_GUARDED_RPC(GetPluginInfo, GetPluginInfoRequest, GetPluginInfoResponse)

#undef KBENCH_GUARDED_RPC

// The streaming rpcs: checked before a byte of the stream is read or written.
grpc::ServerReadReactor<v1::UploadPluginRequest>* GuardedCoordinatorService::UploadPlugin(
    Context* context, v1::UploadPluginResponse* response) {
  if (grpc::Status denied = Check(context, "UploadPlugin"); !denied.ok())
    return new RefusedRead<v1::UploadPluginRequest>(std::move(denied));
  return inner_->UploadPlugin(context, response);
}

grpc::ServerWriteReactor<v1::PluginChunk>* GuardedCoordinatorService::GetPlugin(Context* context,
                                                                                const v1::GetPluginRequest* request) {
  if (grpc::Status denied = Check(context, "GetPlugin"); !denied.ok())
    return new RefusedWrite<v1::PluginChunk>(std::move(denied));
  return inner_->GetPlugin(context, request);
}

grpc::Status GuardedWorkerService::GetInfo(grpc::ServerContext* context, const v1::GetInfoRequest* request,
                                           v1::WorkerInfo* response) {
  if (grpc::Status denied = CheckCall(*authorizer_, context, "/kbench.v1.Worker/GetInfo"); !denied.ok()) return denied;
  return inner_->GetInfo(context, request, response);
}

grpc::Status GuardedWorkerService::RunJob(grpc::ServerContext* context, const v1::RunJobRequest* request,
                                          grpc::ServerWriter<v1::RunJobEvent>* writer) {
  if (grpc::Status denied = CheckCall(*authorizer_, context, "/kbench.v1.Worker/RunJob"); !denied.ok()) return denied;
  return inner_->RunJob(context, request, writer);
}

}  // namespace kbench::server::auth
