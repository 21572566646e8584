// CoordinatorService: proto in, Coordinator call (on the pool), proto out. No logic lives here.
#include "server/service/coordinator_service.h"

#include <utility>

#include "api/channel.h"
#include "server/service/plugin_streams.h"

namespace kbench::server {

using api::ToGrpc;

namespace {

// The newest queued jobs the queue watch reads: when lease calls wait, the queue is short.
constexpr int kQueueWatchJobs = 256;

grpc::Status ShuttingDown() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator is shutting down; retry");
}

}  // namespace

CoordinatorService::CoordinatorService(Coordinator* coordinator, RequestGate* gate, int handler_threads,
                                       absl::Duration queue_watch_period)
    : coordinator_(coordinator),
      gate_(gate),
      queue_watch_([coordinator] { return coordinator->ListJobs(kQueueWatchJobs, v1::QUEUED); }, &waiters_,
                   queue_watch_period),
      pool_(handler_threads) {
  coordinator_->set_queued_listener([this](const v1::Job& job) {
    queue_watch_.MarkAnnounced(job);
    waiters_.JobQueued(job.spec());
  });
}

CoordinatorService::~CoordinatorService() { coordinator_->set_queued_listener(nullptr); }

std::optional<RequestGate::Pass> CoordinatorService::Enter() {
  if (gate_ == nullptr) return std::nullopt;
  return gate_->Enter();
}

template <typename Body>
CoordinatorService::Reactor* CoordinatorService::Dispatch(Context* context, Body body) {
  Reactor* reactor = context->DefaultReactor();
  std::optional<RequestGate::Pass> pass = Enter();
  if (pass.has_value() && !*pass) {
    reactor->Finish(ShuttingDown());
    return reactor;
  }
  // The pass is held until the call is finished: shutdown drains the calls in progress.
  pool_.Run([reactor, body = std::move(body), pass = std::move(pass)]() mutable { reactor->Finish(body()); });
  return reactor;
}

CoordinatorService::Reactor* CoordinatorService::Submit(Context* context, const v1::SubmitRequest* req, v1::SubmitResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<SubmitOutcome> r = coordinator_->Submit(req->spec(), req->idempotency_key());
    if (!r.ok()) return ToGrpc(r.status());
    resp->set_job_id(r->job_id);
    resp->set_deduplicated(r->deduplicated);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::GetJob(Context* context, const v1::GetJobRequest* req, v1::Job* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<v1::Job> r = coordinator_->GetJob(req->job_id());
    if (!r.ok()) return ToGrpc(r.status());
    *resp = *std::move(r);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::ListJobs(Context* context, const v1::ListJobsRequest* req,
                                          v1::ListJobsResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<std::vector<v1::Job>> r = coordinator_->ListJobs(req->limit(), req->state());
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::Job& j : *r) *resp->add_jobs() = std::move(j);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::CancelJob(Context* context, const v1::CancelJobRequest* req,
                                           v1::CancelJobResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<v1::Job> r = coordinator_->CancelJob(req->job_id());
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_job() = *std::move(r);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::GetResults(Context* context, const v1::GetResultsRequest* req,
                                            v1::GetResultsResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<JobResults> r = coordinator_->GetResults(req->job_id(), req->include_samples());
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_job() = std::move(r->job);
    for (v1::Result& x : r->results) *resp->add_results() = std::move(x);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::ListWorkers(Context* context, const v1::ListWorkersRequest*,
                                             v1::ListWorkersResponse* resp) {
  return Dispatch(context, [this, resp] {
    absl::StatusOr<std::vector<v1::WorkerStatus>> r = coordinator_->ListWorkers();
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::WorkerStatus& w : *r) *resp->add_workers() = std::move(w);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::ListKernels(Context* context, const v1::ListKernelsRequest* req,
                                             v1::ListKernelsResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<std::vector<v1::OpInfo>> r = coordinator_->ListKernels(req->op());
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::OpInfo& op : *r) *resp->add_ops() = std::move(op);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::GetHistory(Context* context, const v1::GetHistoryRequest* req,
                                            v1::GetHistoryResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    HistoryQuery q;
    q.op = req->op();
    q.variant = req->variant();
    q.gpu_model_substring = req->gpu_model();
    q.shape = req->shape();
    q.dtype = req->dtype();
    q.limit = req->limit();
    q.cache_mode = req->cache_mode();
    q.hot_batch = req->hot_batch();
    q.backend = req->backend();
    absl::StatusOr<HistoryOutcome> r = coordinator_->GetHistory(std::move(q));
    if (!r.ok()) return ToGrpc(r.status());
    for (const HistoryRow& row : r->points) {
      v1::HistoryPoint* p = resp->add_points();
      p->set_job_id(row.job_id);
      p->set_finished_unix_ms(row.finished_unix_ms);
      p->set_median_ns(row.median_ns);
      p->set_utilization(row.utilization);
      p->set_verdict(row.verdict.verdict);
      p->set_change_fraction(row.verdict.change_fraction);
      p->set_p_value(row.verdict.p_value);
      p->set_branch(row.branch);
      p->set_git_sha(row.git_sha);
      p->set_variant(row.series.variant);
      p->set_shape(row.series.shape);
      p->set_dtype(row.series.dtype);
      p->set_gpu_model(row.series.gpu_model);
      p->set_baseline_median_ns(row.verdict.baseline_median_ns);
      p->set_series_run_spread(row.series_run_spread);
      p->set_series_baseline_runs(row.series_baseline_runs);
      p->set_cache_mode(row.series.cache_mode);
      p->set_hot_batch(row.series.hot_batch);
      p->set_backend(row.series.backend);
      p->set_muted(row.muted);
      p->set_threshold_override(row.threshold_override);
    }
    resp->set_baseline_median_ns(r->baseline_median_ns);
    resp->set_baseline_results(r->baseline_results);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::SetSeriesControl(Context* context, const v1::SetSeriesControlRequest* req,
                                                  v1::SetSeriesControlResponse* resp) {
  return Dispatch(context, [this, context, req, resp] {
    const std::string who = caller_name_ ? caller_name_(*context) : "";
    absl::StatusOr<v1::SeriesControl> r = coordinator_->SetSeriesControl(req->control(), who);
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_control() = *std::move(r);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::ListSeriesControls(Context* context, const v1::ListSeriesControlsRequest* req,
                                                    v1::ListSeriesControlsResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<std::vector<v1::SeriesControl>> r = coordinator_->ListSeriesControls(req->op());
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::SeriesControl& c : *r) *resp->add_controls() = std::move(c);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::RegisterWorker(Context* context, const v1::RegisterWorkerRequest* req,
                                                v1::RegisterWorkerResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<RegisterOutcome> r = coordinator_->RegisterWorker(req->info());
    if (!r.ok()) return ToGrpc(r.status());
    resp->set_worker_id(r->worker_id);
    resp->set_heartbeat_interval_ms(r->heartbeat_interval_ms);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::Heartbeat(Context* context, const v1::HeartbeatRequest* req,
                                           v1::HeartbeatResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<std::vector<std::string>> r = coordinator_->Heartbeat(req->worker_id());
    if (!r.ok()) return ToGrpc(r.status());
    for (std::string& id : *r) resp->add_cancelled_job_ids(std::move(id));
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::ReportProgress(Context* context, const v1::ReportProgressRequest* req,
                                                v1::ReportProgressResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    std::vector<v1::Result> results(req->results().begin(), req->results().end());
    absl::StatusOr<ProgressOutcome> r =
        coordinator_->ReportProgress(req->lease_id(), req->has_progress() ? &req->progress() : nullptr, results);
    if (!r.ok()) return ToGrpc(r.status());
    resp->set_lease_expires_unix_ms(r->lease_expires_unix_ms);
    resp->set_cancelled(r->cancelled);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::CompleteJob(Context* context, const v1::CompleteJobRequest* req,
                                             v1::CompleteJobResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    absl::StatusOr<v1::Job> r = coordinator_->CompleteJob(req->lease_id(), req->failed(), req->error());
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_job() = *std::move(r);
    return grpc::Status::OK;
  });
}

CoordinatorService::Reactor* CoordinatorService::GetPluginInfo(Context* context, const v1::GetPluginInfoRequest* req,
                                               v1::GetPluginInfoResponse* resp) {
  return Dispatch(context, [this, req, resp] {
    if (plugins_ == nullptr) return ToGrpc(NoPluginStore());
    absl::StatusOr<int64_t> size = plugins_->SizeOf(req->sha256());
    if (!size.ok()) return ToGrpc(size.status());
    resp->set_sha256(req->sha256());
    resp->set_size_bytes(*size);
    return grpc::Status::OK;
  });
}

grpc::ServerReadReactor<v1::UploadPluginRequest>* CoordinatorService::UploadPlugin(Context*,
                                                                                   v1::UploadPluginResponse* resp) {
  std::optional<RequestGate::Pass> pass = Enter();
  if (pass.has_value() && !*pass) return RefusedUpload(ShuttingDown());
  return StartPluginUpload(&pool_, std::move(pass), plugins_, resp);
}

grpc::ServerWriteReactor<v1::PluginChunk>* CoordinatorService::GetPlugin(Context*, const v1::GetPluginRequest* req) {
  std::optional<RequestGate::Pass> pass = Enter();
  if (pass.has_value() && !*pass) return RefusedDownload(ShuttingDown());
  return StartPluginDownload(&pool_, std::move(pass), plugins_, req->sha256());
}

}  // namespace kbench::server
