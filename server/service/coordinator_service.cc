// CoordinatorService: proto in, Coordinator call, proto out. No logic lives here.
#include "server/service/coordinator_service.h"

#include <utility>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/channel.h"
#include "api/plugin_spec.h"
#include "api/quote.h"

namespace kbench::server {

using api::ToGrpc;

template <typename Body>
grpc::Status CoordinatorService::Gated(Body body) {
  if (gate_ == nullptr) return body();
  RequestGate::Pass pass = gate_->Enter();
  if (!pass) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator is shutting down; retry");
  return body();
}

grpc::Status CoordinatorService::Submit(grpc::ServerContext*, const v1::SubmitRequest* req, v1::SubmitResponse* resp) {
  return Gated([&] {
    absl::StatusOr<SubmitOutcome> r = coordinator_->Submit(req->spec(), req->idempotency_key());
    if (!r.ok()) return ToGrpc(r.status());
    resp->set_job_id(r->job_id);
    resp->set_deduplicated(r->deduplicated);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::GetJob(grpc::ServerContext*, const v1::GetJobRequest* req, v1::Job* resp) {
  return Gated([&] {
    absl::StatusOr<v1::Job> r = coordinator_->GetJob(req->job_id());
    if (!r.ok()) return ToGrpc(r.status());
    *resp = *std::move(r);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* req,
                                          v1::ListJobsResponse* resp) {
  return Gated([&] {
    absl::StatusOr<std::vector<v1::Job>> r = coordinator_->ListJobs(req->limit(), req->state());
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::Job& j : *r) *resp->add_jobs() = std::move(j);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* req,
                                           v1::CancelJobResponse* resp) {
  return Gated([&] {
    absl::StatusOr<v1::Job> r = coordinator_->CancelJob(req->job_id());
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_job() = *std::move(r);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::GetResults(grpc::ServerContext*, const v1::GetResultsRequest* req,
                                            v1::GetResultsResponse* resp) {
  return Gated([&] {
    absl::StatusOr<JobResults> r = coordinator_->GetResults(req->job_id(), req->include_samples());
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_job() = std::move(r->job);
    for (v1::Result& x : r->results) *resp->add_results() = std::move(x);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest*,
                                             v1::ListWorkersResponse* resp) {
  return Gated([&] {
    absl::StatusOr<std::vector<v1::WorkerStatus>> r = coordinator_->ListWorkers();
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::WorkerStatus& w : *r) *resp->add_workers() = std::move(w);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::ListKernels(grpc::ServerContext*, const v1::ListKernelsRequest* req,
                                             v1::ListKernelsResponse* resp) {
  return Gated([&] {
    absl::StatusOr<std::vector<v1::OpInfo>> r = coordinator_->ListKernels(req->op());
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::OpInfo& op : *r) *resp->add_ops() = std::move(op);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::GetHistory(grpc::ServerContext*, const v1::GetHistoryRequest* req,
                                            v1::GetHistoryResponse* resp) {
  return Gated([&] {
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

grpc::Status CoordinatorService::SetSeriesControl(grpc::ServerContext* context, const v1::SetSeriesControlRequest* req,
                                                  v1::SetSeriesControlResponse* resp) {
  return Gated([&] {
    const std::string who = caller_name_ && context != nullptr ? caller_name_(*context) : "";
    absl::StatusOr<v1::SeriesControl> r = coordinator_->SetSeriesControl(req->control(), who);
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_control() = *std::move(r);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::ListSeriesControls(grpc::ServerContext*, const v1::ListSeriesControlsRequest* req,
                                                    v1::ListSeriesControlsResponse* resp) {
  return Gated([&] {
    absl::StatusOr<std::vector<v1::SeriesControl>> r = coordinator_->ListSeriesControls(req->op());
    if (!r.ok()) return ToGrpc(r.status());
    for (v1::SeriesControl& c : *r) *resp->add_controls() = std::move(c);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* req,
                                                v1::RegisterWorkerResponse* resp) {
  return Gated([&] {
    absl::StatusOr<RegisterOutcome> r = coordinator_->RegisterWorker(req->info());
    if (!r.ok()) return ToGrpc(r.status());
    resp->set_worker_id(r->worker_id);
    resp->set_heartbeat_interval_ms(r->heartbeat_interval_ms);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req,
                                           v1::HeartbeatResponse* resp) {
  return Gated([&] {
    absl::StatusOr<std::vector<std::string>> r = coordinator_->Heartbeat(req->worker_id());
    if (!r.ok()) return ToGrpc(r.status());
    for (std::string& id : *r) resp->add_cancelled_job_ids(std::move(id));
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::LeaseJob(grpc::ServerContext*, const v1::LeaseJobRequest* req,
                                          v1::LeaseJobResponse* resp) {
  return Gated([&] {
    absl::StatusOr<LeaseOutcome> r = coordinator_->LeaseJob(req->worker_id(), req->device_uuid());
    if (!r.ok()) return ToGrpc(r.status());
    resp->set_granted(r->granted);
    if (r->granted) {
      *resp->mutable_job() = std::move(r->job);
      resp->set_lease_id(r->lease_id);
      resp->set_lease_expires_unix_ms(r->lease_expires_unix_ms);
    }
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::ReportProgress(grpc::ServerContext*, const v1::ReportProgressRequest* req,
                                                v1::ReportProgressResponse* resp) {
  return Gated([&] {
    std::vector<v1::Result> results(req->results().begin(), req->results().end());
    absl::StatusOr<ProgressOutcome> r =
        coordinator_->ReportProgress(req->lease_id(), req->has_progress() ? &req->progress() : nullptr, results);
    if (!r.ok()) return ToGrpc(r.status());
    resp->set_lease_expires_unix_ms(r->lease_expires_unix_ms);
    resp->set_cancelled(r->cancelled);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::CompleteJob(grpc::ServerContext*, const v1::CompleteJobRequest* req,
                                             v1::CompleteJobResponse* resp) {
  return Gated([&] {
    absl::StatusOr<v1::Job> r = coordinator_->CompleteJob(req->lease_id(), req->failed(), req->error());
    if (!r.ok()) return ToGrpc(r.status());
    *resp->mutable_job() = *std::move(r);
    return grpc::Status::OK;
  });
}

namespace {

constexpr size_t kPluginChunkBytes = 1 << 20;

grpc::Status NoPluginStore() {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "this coordinator keeps no kernel plugins (start it with --plugin_dir)");
}

}  // namespace

grpc::Status CoordinatorService::UploadPlugin(grpc::ServerContext*, grpc::ServerReader<v1::UploadPluginRequest>* reader,
                                              v1::UploadPluginResponse* resp) {
  return Gated([&] {
    if (plugins_ == nullptr) return NoPluginStore();
    absl::StatusOr<std::unique_ptr<PluginStore::Upload>> upload = plugins_->BeginUpload();
    if (!upload.ok()) return ToGrpc(upload.status());
    v1::UploadPluginRequest chunk;
    std::string expected;
    bool first = true;
    while (reader->Read(&chunk)) {
      if (first) {
        expected = chunk.expected_sha256();
        if (absl::Status s = api::CheckSize("name", chunk.name(), api::kMaxShortTextBytes); !s.ok()) return ToGrpc(s);
        if (!expected.empty() && !api::IsSha256Hex(expected))
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              absl::StrCat("expected_sha256: ", api::Quote(expected),
                                           " is not a SHA-256 (64 lower-case hex digits)"));
      }
      first = false;
      if (chunk.data().size() > kPluginChunkBytes)
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            absl::StrCat("data: at most ", kPluginChunkBytes, " bytes per message"));
      if (absl::Status s = (*upload)->Append(chunk.data()); !s.ok()) return ToGrpc(s);
    }
    absl::StatusOr<StoredPlugin> stored = (*upload)->Finish(expected);
    if (!stored.ok()) return ToGrpc(stored.status());
    resp->set_sha256(stored->sha256);
    resp->set_size_bytes(stored->size_bytes);
    resp->set_already_stored(stored->already_stored);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::GetPluginInfo(grpc::ServerContext*, const v1::GetPluginInfoRequest* req,
                                               v1::GetPluginInfoResponse* resp) {
  return Gated([&] {
    if (plugins_ == nullptr) return NoPluginStore();
    absl::StatusOr<int64_t> size = plugins_->SizeOf(req->sha256());
    if (!size.ok()) return ToGrpc(size.status());
    resp->set_sha256(req->sha256());
    resp->set_size_bytes(*size);
    return grpc::Status::OK;
  });
}

grpc::Status CoordinatorService::GetPlugin(grpc::ServerContext*, const v1::GetPluginRequest* req,
                                           grpc::ServerWriter<v1::PluginChunk>* writer) {
  return Gated([&] {
    if (plugins_ == nullptr) return NoPluginStore();
    absl::StatusOr<std::string> path = plugins_->PathOf(req->sha256());
    if (!path.ok()) return ToGrpc(path.status());
    std::ifstream in(*path, std::ios::binary);
    if (!in) return grpc::Status(grpc::StatusCode::INTERNAL, absl::StrCat("cannot read ", *path));
    in.seekg(0, std::ios::end);
    const int64_t size = in.tellg();
    in.seekg(0);
    std::string buf(kPluginChunkBytes, '\0');
    bool first = true;
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
      v1::PluginChunk chunk;
      if (first) chunk.set_size_bytes(size);
      first = false;
      chunk.set_data(buf.data(), static_cast<size_t>(in.gcount()));
      if (!writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "the reader went away");
    }
    return grpc::Status::OK;
  });
}

}  // namespace kbench::server
