// A simulated worker: the agent's lease loop and heartbeat as a chain of scheduled steps.
#include "absl/strings/str_cat.h"
#include "server/bench/sim.h"

namespace kbench::load {
namespace {

using std::chrono::milliseconds;
using Stub = v1::Coordinator::Stub;

constexpr milliseconds kRetry{1000};  // After a failed call: the coordinator is busy or restarting.

bool LeaseGone(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::FAILED_PRECONDITION || s.error_code() == grpc::StatusCode::NOT_FOUND;
}

}  // namespace

SimWorker::SimWorker(int index, SimEnv* env)
    : index_(index),
      env_(env),
      info_(LoadWorkerInfo(index, *env->catalog)),
      idle_(env->config->idle_initial),
      rng_(env->config->seed * 1'000'003 + static_cast<uint64_t>(index)) {}

void SimWorker::Start() { env_->scheduler->Post([this] { Register(); }); }

void SimWorker::Register() {
  if (env_->stopping) return;
  v1::RegisterWorkerRequest req;
  *req.mutable_info() = info_;
  env_->rpcs->Call<v1::RegisterWorkerRequest, v1::RegisterWorkerResponse>(
      "RegisterWorker", index_, env_->config->worker_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->RegisterWorker(ctx, rq, rs, cb); },
      [this](const grpc::Status& s, v1::RegisterWorkerResponse& resp) {
        if (!s.ok()) return env_->scheduler->After(kRetry, [this] { Register(); });
        worker_id_ = resp.worker_id();
        info_.set_worker_id(worker_id_);
        if (resp.heartbeat_interval_ms() > 0) heartbeat_interval_ = milliseconds(resp.heartbeat_interval_ms());
        ++env_->registered;
        // Spread over one interval, as workers started at different times would be.
        std::uniform_int_distribution<int64_t> phase(0, heartbeat_interval_.count());
        env_->scheduler->After(milliseconds(phase(rng_)), [this] { Heartbeat(); });
        std::uniform_int_distribution<int64_t> lease_phase(0, env_->config->idle_max.count());
        LeaseAfter(milliseconds(lease_phase(rng_)));
      });
}

void SimWorker::Heartbeat() {
  if (env_->stopping) return;
  v1::HeartbeatRequest req;
  req.set_worker_id(worker_id_);
  env_->rpcs->Call<v1::HeartbeatRequest, v1::HeartbeatResponse>(
      "Heartbeat", index_, env_->config->worker_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->Heartbeat(ctx, rq, rs, cb); },
      [this](const grpc::Status&, v1::HeartbeatResponse&) {
        // Next beat one interval after this one was answered, as the agent does; errors are counted.
        env_->scheduler->After(heartbeat_interval_, [this] { Heartbeat(); });
      });
}

void SimWorker::LeaseAfter(milliseconds wait) { env_->scheduler->After(wait, [this] { Lease(); }); }

void SimWorker::Lease() {
  if (env_->stopping) return;
  v1::LeaseJobRequest req;
  req.set_worker_id(worker_id_);
  req.set_device_uuid(info_.devices(0).uuid());
  const bool long_poll = env_->config->lease_wait.count() > 0;
  req.set_wait_ms(static_cast<int32_t>(env_->config->lease_wait.count()));
  env_->rpcs->Call<v1::LeaseJobRequest, v1::LeaseJobResponse>(
      "LeaseJob", index_, env_->config->worker_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->LeaseJob(ctx, rq, rs, cb); },
      [this, long_poll](const grpc::Status& s, v1::LeaseJobResponse& resp) {
        if (!s.ok()) return LeaseAfter(kRetry);
        if (!resp.granted() && long_poll && resp.held_ms() > 0) return Lease();  // Held for its wait: again at once.
        if (!resp.granted()) {
          const milliseconds wait = idle_;
          idle_ = std::min(env_->config->idle_max, idle_ * 2);
          return LeaseAfter(wait);
        }
        idle_ = env_->config->idle_initial;
        job_ = std::move(*resp.mutable_job());
        lease_id_ = resp.lease_id();
        if (job_.attempts() == 1) env_->rpcs->RecordQueueWait(job_.created_unix_ms());
        plan_ = PlanResults(*env_->catalog, job_.spec());
        next_result_ = 0;
        env_->ledger->Leased(job_.job_id(), worker_id_, static_cast<int>(plan_.size()));
        if (plan_.empty()) {
          env_->ledger->Problem(absl::StrCat("job ", job_.job_id(), " plans no result on worker ", worker_id_));
          return Complete();
        }
        env_->scheduler->After(env_->config->result_time, [this] { ReportNext(); });
      });
}

void SimWorker::ReportNext() {
  if (env_->stopping) return;
  v1::ReportProgressRequest req;
  req.set_lease_id(lease_id_);
  req.mutable_progress()->set_results_done(next_result_ + 1);
  req.mutable_progress()->set_results_total(static_cast<int32_t>(plan_.size()));
  const PlannedResult& planned = plan_[static_cast<size_t>(next_result_)];
  req.mutable_progress()->set_current(absl::StrCat(job_.spec().op(), " ", planned.variant));
  *req.add_results() =
      LoadResult(job_, next_result_, planned, info_.devices(0), env_->config->samples_per_result, rng_);
  env_->rpcs->Call<v1::ReportProgressRequest, v1::ReportProgressResponse>(
      "ReportProgress", index_, env_->config->worker_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->ReportProgress(ctx, rq, rs, cb); },
      [this](const grpc::Status& s, v1::ReportProgressResponse&) {
        if (LeaseGone(s)) {
          env_->ledger->LeaseLost(job_.job_id());
          return LeaseAfter(env_->config->idle_initial);
        }
        // Any other failure: the result stays pending and goes with the next try, as in the agent.
        if (!s.ok()) return env_->scheduler->After(kRetry, [this] { ReportNext(); });
        if (++next_result_ == static_cast<int>(plan_.size())) return Complete();
        env_->scheduler->After(env_->config->result_time, [this] { ReportNext(); });
      });
}

void SimWorker::Complete() {
  if (env_->stopping) return;
  v1::CompleteJobRequest req;
  req.set_lease_id(lease_id_);
  env_->rpcs->Call<v1::CompleteJobRequest, v1::CompleteJobResponse>(
      "CompleteJob", index_, env_->config->worker_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->CompleteJob(ctx, rq, rs, cb); },
      [this](const grpc::Status& s, v1::CompleteJobResponse&) {
        if (LeaseGone(s)) {
          env_->ledger->LeaseLost(job_.job_id());
          return LeaseAfter(env_->config->idle_initial);
        }
        if (!s.ok()) return env_->scheduler->After(kRetry, [this] { Complete(); });
        env_->ledger->Completed(job_.job_id());
        Lease();  // Straight on to the next job, as the agent does.
      });
}

}  // namespace kbench::load
