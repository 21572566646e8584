// The ledger's bookkeeping and the final read-back of every job.
#include "server/bench/ledger.h"

#include "absl/strings/str_cat.h"
#include "api/channel.h"

namespace kbench::load {

void Ledger::Submitted(const std::string& job_id, const std::string& key, bool deduplicated) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = jobs_[job_id];
  ++e.submits;
  // Every submission carries a fresh key: a deduplicated answer, or a second submission naming a job
  // already handed out, means two submissions became one job.
  if (deduplicated || e.submits > 1 || !keys_.insert(key).second)
    problems_.push_back(absl::StrCat("submission ", key, " answered with job ", job_id, " of another submission"));
  e.key = key;
}

void Ledger::ClientDone(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = jobs_[job_id];
  if (!e.client_done) ++client_done_;
  e.client_done = true;
}

void Ledger::Leased(const std::string& job_id, const std::string& worker_id, int expected_results) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = jobs_[job_id];
  ++e.leases;  // Again only after its lease expired: Verify checks the attempts the coordinator counted.
  e.expected_results = expected_results;
  (void)worker_id;
}

void Ledger::Completed(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (++jobs_[job_id].completions > 1) problems_.push_back(absl::StrCat("job ", job_id, " completed twice"));
  ++completed_;
}

void Ledger::LeaseLost(const std::string& job_id) {
  // The coordinator found the lease expired (a worker it had not heard from within the lease's
  // time): the job is run again, which Verify counts. Not an error, but a sign of overload here.
  std::lock_guard<std::mutex> lock(mu_);
  ++leases_lost_;
  (void)job_id;
}

void Ledger::Problem(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  problems_.push_back(what);
}

int64_t Ledger::submitted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(keys_.size());
}

int64_t Ledger::completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_;
}

int64_t Ledger::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(keys_.size()) - client_done_;
}

Ledger::Verdict Ledger::Verify(v1::Coordinator::Stub& stub, const std::string& token, int samples_per_result) const {
  std::lock_guard<std::mutex> lock(mu_);
  Verdict v;
  v.problems = problems_;
  v.leases_lost = leases_lost_;
  const api::ChannelOptions options{"", token};
  for (const auto& [job_id, e] : jobs_) {
    if (e.submits == 0) {
      v.problems.push_back(absl::StrCat("job ", job_id, " was leased but never submitted by this run"));
      ++v.duplicated;
      continue;
    }
    ++v.jobs;
    const std::string name = absl::StrCat("job ", job_id, " (", e.key, ")");
    if (e.completions > 1) {
      ++v.duplicated;
      continue;
    }
    if (e.leases > 1) ++v.requeued;
    v1::GetResultsRequest req;
    req.set_job_id(job_id);
    req.set_include_samples(true);
    v1::GetResultsResponse resp;
    std::unique_ptr<grpc::ClientContext> ctx = api::MakeContext(options, std::chrono::seconds(60));
    const grpc::Status s = stub.GetResults(ctx.get(), req, &resp);
    if (!s.ok()) {
      v.problems.push_back(absl::StrCat(name, ": GetResults: ", s.error_message()));
      ++v.lost;
      continue;
    }
    const v1::Job& job = resp.job();
    if (job.state() != v1::SUCCEEDED || e.completions != 1) {
      v.problems.push_back(absl::StrCat(name, ": state ", v1::JobState_Name(job.state()), ", leased ", e.leases,
                                        " time(s), completed ", e.completions));
      ++v.lost;
      continue;
    }
    // Every lease is an attempt; an attempt no worker of this run was given would be a double grant.
    if (job.attempts() != e.leases) {
      v.problems.push_back(absl::StrCat(name, ": ", job.attempts(), " attempts, ", e.leases, " leases seen"));
      ++v.duplicated;
      continue;
    }
    std::set<int> indices;
    bool whole = true;
    for (const v1::Result& r : resp.results()) {
      indices.insert(r.index());
      if (r.index() < 0 || r.index() >= e.expected_results || r.timing().samples_ns_size() != samples_per_result ||
          r.job_id() != job_id || r.status() != v1::OK)
        whole = false;
    }
    const bool doubled = indices.size() != static_cast<size_t>(resp.results_size());
    if (doubled || !whole || static_cast<int>(indices.size()) != e.expected_results) {
      v.problems.push_back(absl::StrCat(name, ": ", resp.results_size(), " results (", indices.size(),
                                        " distinct), expected ", e.expected_results, " with ", samples_per_result,
                                        " samples each"));
      ++(doubled ? v.duplicated : v.lost);
      continue;
    }
    ++v.succeeded;
  }
  return v;
}

}  // namespace kbench::load
