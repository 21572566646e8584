#include "worker/agent/worker_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "api/channel.h"

namespace kbench::worker {

grpc::Status WorkerService::GetInfo(grpc::ServerContext*, const v1::GetInfoRequest*, v1::WorkerInfo* response) {
  *response = node_.Info();
  return grpc::Status::OK;
}

grpc::Status WorkerService::RunJob(grpc::ServerContext* context, const v1::RunJobRequest* request,
                                   grpc::ServerWriter<v1::RunJobEvent>* writer) {
  absl::StatusOr<std::unique_ptr<DeviceLease>> lease = node_.TryAcquireDevice();
  if (!lease.ok()) return api::ToGrpc(lease.status());
  // Any free device: all of one kind, and the plan is checked against the device that runs it.
  JobRunner& runner = node_.runner((*lease)->device_index());
  absl::StatusOr<JobPlan> plan = runner.Plan(request->spec());
  if (!plan.ok()) return api::ToGrpc(plan.status());

  // A direct run has no coordinator job id; this one names it in its results.
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  JobContext job{.job_id = absl::StrCat("direct-", now_ms, "-", direct_jobs_.fetch_add(1) + 1),
                 .worker_id = node_.worker_id(),
                 .attempt = 1};
  DeviceLease& device = **lease;
  device.set_job_id(job.job_id);
  runner.Run(*plan, job, device.cancel(), [&](const v1::RunJobEvent& event) {
    if (context->IsCancelled() || !writer->Write(event)) device.Cancel();
  });
  if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the caller cancelled the job");
  return grpc::Status::OK;
}

}  // namespace kbench::worker
