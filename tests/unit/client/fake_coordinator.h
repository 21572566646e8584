// An in-process Coordinator for client tests: records what the client sends and answers from a
// script. Listens on 127.0.0.1 with a port chosen by the system.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "kbench/v1/coordinator.grpc.pb.h"

namespace kbench::client::testing {

class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  // Everything below is guarded by mu; tests set it up before the client runs and read it after.
  std::mutex mu;
  std::vector<v1::SubmitRequest> submits;
  std::vector<std::string> tokens;                // The authorization metadata of each call.
  grpc::Status submit_status = grpc::Status::OK;  // Returned by Submit when not OK.
  // The states GetJob walks through for every job, one per call; the last one repeats.
  std::vector<v1::JobState> script = {v1::QUEUED, v1::RUNNING, v1::SUCCEEDED};
  std::string job_error;  // Job.error when the script ends in FAILED.
  std::map<std::string, int> get_job_calls;
  std::map<std::string, std::vector<v1::Result>> results;  // By job id; default: one OK result.
  std::vector<v1::GetResultsRequest> results_requests;
  v1::ListJobsRequest last_list_jobs;
  std::vector<v1::Job> recent_jobs;
  v1::ListWorkersResponse workers;
  v1::ListKernelsResponse kernels;
  std::string last_kernels_op;
  std::vector<v1::GetHistoryRequest> history_requests;
  v1::GetHistoryResponse history;  // Answered to every GetHistory.
  std::vector<v1::SeriesControl> controls;  // Recorded by SetSeriesControl, listed by ListSeriesControls.
  grpc::Status set_control_status = grpc::Status::OK;  // Returned by SetSeriesControl when not OK.

  static v1::Result OkResult(const std::string& job_id, v1::ResultStatus status = v1::OK) {
    v1::Result r;
    r.set_job_id(job_id);
    r.set_op("rmsnorm");
    r.set_variant("cpu_naive");
    auto* d = r.mutable_problem()->add_dims();
    d->set_name("rows");
    d->set_value(256);
    r.mutable_problem()->set_dtype(v1::DTYPE_BF16);
    r.set_status(status);
    r.mutable_timing()->set_median_ns(5000);
    r.mutable_timing()->set_count(10);
    r.mutable_correctness()->set_passed(status == v1::OK);
    r.mutable_correctness()->set_trials(3);
    return r;
  }

  grpc::Status Submit(grpc::ServerContext* ctx, const v1::SubmitRequest* req, v1::SubmitResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    if (!submit_status.ok()) return submit_status;
    submits.push_back(*req);
    resp->set_job_id(absl::StrCat("j-", submits.size()));
    specs_[resp->job_id()] = req->spec();
    return grpc::Status::OK;
  }

  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req, v1::Job* job) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    if (!specs_.count(req->job_id())) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no job " + req->job_id());
    *job = JobAt(req->job_id(), get_job_calls[req->job_id()]++);
    return grpc::Status::OK;
  }

  grpc::Status ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req, v1::ListJobsResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    last_list_jobs = *req;
    for (const auto& j : recent_jobs) *resp->add_jobs() = j;
    return grpc::Status::OK;
  }

  grpc::Status GetResults(grpc::ServerContext* ctx, const v1::GetResultsRequest* req,
                          v1::GetResultsResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    if (!specs_.count(req->job_id())) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no job " + req->job_id());
    results_requests.push_back(*req);
    *resp->mutable_job() = JobAt(req->job_id(), 1 << 20);
    auto it = results.find(req->job_id());
    if (it == results.end())
      *resp->add_results() = OkResult(req->job_id());
    else
      for (const auto& r : it->second) *resp->add_results() = r;
    return grpc::Status::OK;
  }

  grpc::Status ListWorkers(grpc::ServerContext* ctx, const v1::ListWorkersRequest*,
                           v1::ListWorkersResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    *resp = workers;
    return grpc::Status::OK;
  }

  grpc::Status ListKernels(grpc::ServerContext* ctx, const v1::ListKernelsRequest* req,
                           v1::ListKernelsResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    last_kernels_op = req->op();
    for (const auto& op : kernels.ops())
      if (req->op().empty() || op.name() == req->op()) *resp->add_ops() = op;
    return grpc::Status::OK;
  }

  grpc::Status GetHistory(grpc::ServerContext* ctx, const v1::GetHistoryRequest* req,
                          v1::GetHistoryResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    history_requests.push_back(*req);
    *resp = history;
    return grpc::Status::OK;
  }

  grpc::Status SetSeriesControl(grpc::ServerContext* ctx, const v1::SetSeriesControlRequest* req,
                                v1::SetSeriesControlResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    if (!set_control_status.ok()) return set_control_status;
    v1::SeriesControl c = req->control();
    c.set_id(static_cast<int64_t>(controls.size()) + 1);
    c.set_set_by("root");
    c.set_set_unix_ms(1'700'000'000'000);
    controls.push_back(c);
    *resp->mutable_control() = c;
    return grpc::Status::OK;
  }

  grpc::Status ListSeriesControls(grpc::ServerContext* ctx, const v1::ListSeriesControlsRequest* req,
                                  v1::ListSeriesControlsResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    for (const auto& c : controls)
      if (req->op().empty() || c.scope().op() == req->op()) *resp->add_controls() = c;
    return grpc::Status::OK;
  }

  // A job known to GetJob and GetResults without a Submit (for status and results tests).
  void AddJob(const std::string& id, const std::string& op) {
    std::lock_guard<std::mutex> lock(mu);
    specs_[id].set_op(op);
  }

 private:
  void Record(grpc::ServerContext* ctx) {
    auto it = ctx->client_metadata().find("authorization");
    tokens.push_back(it == ctx->client_metadata().end() ? "" : std::string(it->second.data(), it->second.size()));
  }

  v1::Job JobAt(const std::string& id, int call) {
    v1::Job job;
    job.set_job_id(id);
    *job.mutable_spec() = specs_[id];
    const auto state = script[std::min<size_t>(call, script.size() - 1)];
    job.set_state(state);
    job.mutable_progress()->set_results_total(2);
    job.mutable_progress()->set_results_done(state == v1::QUEUED ? 0 : state == v1::RUNNING ? 1 : 2);
    if (state == v1::RUNNING) job.mutable_progress()->set_current("rmsnorm cpu_naive 256 bf16");
    if (state == v1::FAILED) job.set_error(job_error);
    return job;
  }

  std::map<std::string, v1::JobSpec> specs_;
};

// The fake served on loopback for the lifetime of the object.
class FakeServer {
 public:
  FakeServer() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
  }
  ~FakeServer() { server_->Shutdown(); }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

  FakeCoordinator service;

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace kbench::client::testing
