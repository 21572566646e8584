// Byte budgets of list responses; see coordinator_budget.h.
#include "server/coordinator/coordinator_budget.h"

#include "absl/strings/str_cat.h"

namespace kbench::server {
namespace {

// Bytes an entry adds to its repeated field: its own size, a tag and a length prefix.
size_t EntryBytes(const google::protobuf::MessageLite& m) { return m.ByteSizeLong() + 6; }

template <typename T>
void KeepWhatFits(std::vector<T>* items, size_t budget) {
  size_t used = 0;
  for (size_t i = 0; i < items->size(); ++i) {
    used += EntryBytes((*items)[i]);
    if (used > budget) {
      items->resize(i);
      return;
    }
  }
}

}  // namespace

void FitJobList(std::vector<v1::Job>* jobs, size_t budget) {
  for (v1::Job& job : *jobs)
    for (v1::CustomVariant& c : *job.mutable_spec()->mutable_custom_variants()) c.clear_source();
  KeepWhatFits(jobs, budget);
}

void FitWorkerList(std::vector<v1::WorkerStatus>* workers, size_t budget) {
  size_t total = 0;
  for (const v1::WorkerStatus& w : *workers) total += EntryBytes(w);
  if (total <= budget) return;
  for (v1::WorkerStatus& w : *workers) w.mutable_info()->clear_catalog();
  KeepWhatFits(workers, budget);
}

void FitOpList(std::vector<v1::OpInfo>* ops, size_t budget) { KeepWhatFits(ops, budget); }

absl::Status FitResults(JobResults* r, size_t budget) {
  auto total = [&] {
    size_t bytes = EntryBytes(r->job);
    for (const v1::Result& x : r->results) bytes += EntryBytes(x);
    return bytes;
  };
  if (total() <= budget) return absl::OkStatus();
  for (v1::Result& x : r->results) x.mutable_timing()->clear_samples_ns();
  if (const size_t bytes = total(); bytes > budget)
    return absl::ResourceExhaustedError(absl::StrCat("job ", r->job.job_id(), ": its ", r->results.size(),
                                                     " results take ", bytes, " bytes even without samples, more than ",
                                                     "the limit of ", budget, " for one response"));
  return absl::OkStatus();
}

}  // namespace kbench::server
