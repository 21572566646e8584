// The Worker gRPC service (worker.proto): a job sent straight to this worker, for a single node
// without a coordinator (worker/README.md). A thin adapter over WorkerNode: the job goes through the
// same planner and runner as a leased one (JobRunner::Plan, Run). kbench-worker serves it only with
// --listen, behind the coordinator's TLS and token rules (server/auth/server_security.h).
#pragma once

#include <atomic>

#include "kbench/v1/worker.grpc.pb.h"
#include "worker/agent/worker_node.h"

namespace kbench::worker {

class WorkerService final : public v1::Worker::Service {
 public:
  explicit WorkerService(WorkerNode& node) : node_(node) {}

  grpc::Status GetInfo(grpc::ServerContext* context, const v1::GetInfoRequest* request,
                       v1::WorkerInfo* response) override;
  // One job at a time per device: RESOURCE_EXHAUSTED while another (direct or leased) job runs;
  // INVALID_ARGUMENT before any event for a bad spec. A caller that goes away cancels the job at
  // the next event.
  grpc::Status RunJob(grpc::ServerContext* context, const v1::RunJobRequest* request,
                      grpc::ServerWriter<v1::RunJobEvent>* writer) override;

 private:
  WorkerNode& node_;
  std::atomic<int64_t> direct_jobs_{0};
};

}  // namespace kbench::worker
