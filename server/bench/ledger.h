// What kbench-load saw happen to every job, from both ends: submitted by a client, leased, reported
// and completed by a simulated worker, read back by its client. The final check (Verify) then asks the
// coordinator for each job and its results; a job lost or done twice is named there.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kbench/v1/coordinator.grpc.pb.h"

namespace kbench::load {

class Ledger {
 public:
  // Client side.
  void Submitted(const std::string& job_id, const std::string& key, bool deduplicated);
  void ClientDone(const std::string& job_id);
  // Worker side. expected_results: what the worker planned for the job.
  void Leased(const std::string& job_id, const std::string& worker_id, int expected_results);
  void Completed(const std::string& job_id);
  void LeaseLost(const std::string& job_id);  // A report or completion refused: the lease had expired.
  // Anything that must not happen, said in a line (kept, the first 20 printed).
  void Problem(const std::string& what);

  int64_t submitted() const;
  int64_t completed() const;
  // Jobs submitted whose client has not yet seen them finish.
  int64_t outstanding() const;

  struct Verdict {
    int64_t jobs = 0;        // Submitted.
    int64_t succeeded = 0;   // SUCCEEDED with every result once.
    int64_t lost = 0;        // Not SUCCEEDED, or results missing.
    int64_t duplicated = 0;  // Completed twice, granted to two workers, results doubled, or created twice.
    int64_t requeued = 0;    // Run again after a lease expired (overload: correct, but worth saying).
    int64_t leases_lost = 0; // Reports or completions refused because the lease had expired.
    std::vector<std::string> problems;
  };
  // Reads every submitted job and its results (with samples) back from the coordinator.
  // samples_per_result: the count every stored result must carry.
  Verdict Verify(v1::Coordinator::Stub& stub, const std::string& token, int samples_per_result) const;

 private:
  struct Entry {
    std::string key;
    int submits = 0;
    int leases = 0;
    int completions = 0;
    int expected_results = -1;
    bool client_done = false;
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> jobs_;
  std::set<std::string> keys_;
  int64_t completed_ = 0;
  int64_t client_done_ = 0;
  int64_t leases_lost_ = 0;
  std::vector<std::string> problems_;
};

}  // namespace kbench::load
