// A simulated client: submit with a fresh idempotency key, poll until the job ends, read its results.
#include <set>

#include "absl/strings/str_cat.h"
#include "server/bench/sim.h"

namespace kbench::load {
namespace {

using std::chrono::milliseconds;
using Stub = v1::Coordinator::Stub;

constexpr milliseconds kRetry{1000};

bool Finished(v1::JobState s) { return s == v1::SUCCEEDED || s == v1::FAILED || s == v1::CANCELLED_JOB; }

}  // namespace

SimClient::SimClient(int channel, SimEnv* env) : index_(channel), env_(env) {}

void SimClient::Start(milliseconds delay) { env_->scheduler->After(delay, [this] { Submit(false); }); }

void SimClient::Submit(bool retry) {
  if (env_->stopping || (!retry && !env_->submitting)) return;
  if (!retry) {
    n_ = env_->next_job++;
    key_ = absl::StrCat("load-", env_->config->seed, "-", n_);
  }
  v1::SubmitRequest req;
  *req.mutable_spec() = LoadJobSpec(n_, env_->config->catalog_ops, env_->config->variants_per_job);
  req.set_idempotency_key(key_);

  env_->rpcs->Call<v1::SubmitRequest, v1::SubmitResponse>(
      "Submit", index_, env_->config->client_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->Submit(ctx, rq, rs, cb); },
      [this, retry](const grpc::Status& s, v1::SubmitResponse& resp) {
        // Retried with the same key: the coordinator must answer with the job it may have stored.
        if (!s.ok()) return env_->scheduler->After(kRetry, [this] { Submit(true); });
        job_id_ = resp.job_id();
        env_->ledger->Submitted(job_id_, key_, resp.deduplicated() && !retry);
        polls_ = 0;
        env_->scheduler->After(env_->config->poll_interval, [this] { Poll(); });
      });
}

void SimClient::Poll() {
  if (env_->stopping) return;
  if (env_->config->list_every > 0 && ++polls_ % env_->config->list_every == 0) {
    v1::ListJobsRequest list;
    list.set_limit(50);
    env_->rpcs->Call<v1::ListJobsRequest, v1::ListJobsResponse>(
        "ListJobs", index_, env_->config->client_token, std::move(list),
        [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->ListJobs(ctx, rq, rs, cb); },
        [](const grpc::Status&, v1::ListJobsResponse&) {});
  }
  v1::GetJobRequest req;
  req.set_job_id(job_id_);
  env_->rpcs->Call<v1::GetJobRequest, v1::Job>(
      "GetJob", index_, env_->config->client_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->GetJob(ctx, rq, rs, cb); },
      [this](const grpc::Status& s, v1::Job& job) {
        if (!s.ok() || !Finished(job.state()))
          return env_->scheduler->After(env_->config->poll_interval, [this] { Poll(); });
        if (job.state() != v1::SUCCEEDED)
          env_->ledger->Problem(absl::StrCat("job ", job_id_, " ended ", v1::JobState_Name(job.state()), ": ",
                                             job.error().substr(0, 200)));
        ReadResults();
      });
}

void SimClient::ReadResults() {
  if (env_->stopping) return;
  v1::GetResultsRequest req;
  req.set_job_id(job_id_);
  env_->rpcs->Call<v1::GetResultsRequest, v1::GetResultsResponse>(
      "GetResults", index_, env_->config->client_token, std::move(req),
      [](Stub* stub, auto* ctx, auto* rq, auto* rs, auto cb) { stub->async()->GetResults(ctx, rq, rs, cb); },
      [this](const grpc::Status& s, v1::GetResultsResponse& resp) {
        if (!s.ok()) return env_->scheduler->After(kRetry, [this] { ReadResults(); });
        // The whole check is Ledger::Verify's at the end; here what a user would notice at once.
        const size_t expected = PlanResults(*env_->catalog, resp.job().spec()).size();
        std::set<int> indices;
        for (const v1::Result& r : resp.results()) indices.insert(r.index());
        if (indices.size() != expected || static_cast<size_t>(resp.results_size()) != expected)
          env_->ledger->Problem(absl::StrCat("job ", job_id_, ": the client read ", resp.results_size(), " results (",
                                             indices.size(), " distinct), expected ", expected));
        env_->ledger->ClientDone(job_id_);
        env_->scheduler->After(env_->config->think_time, [this] { Submit(false); });
      });
}

}  // namespace kbench::load
