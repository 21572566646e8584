// Responses kept under gRPC's message limit, whatever the store holds: a list that failed to send
// would fail for every user (RESOURCE_EXHAUSTED: Sent message larger than max), so lists shed their
// bulky, documented parts and then their oldest entries to stay within a byte budget.
#pragma once

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "kbench/v1/coordinator.pb.h"
#include "kbench/v1/job.pb.h"
#include "server/coordinator/coordinator.h"

namespace kbench::server {

// ListJobs: custom variants' source bytes left out (GetJob has them); then, newest first, the jobs
// that fit in budget bytes.
void FitJobList(std::vector<v1::Job>* jobs, size_t budget);

// ListWorkers: when the list passes budget bytes, the workers' catalogs are left out (ListKernels has
// the merged catalog); then the workers that fit.
void FitWorkerList(std::vector<v1::WorkerStatus>* workers, size_t budget);

// ListKernels: the ops (in name order) that fit in budget bytes; each registration is bounded, but
// the merged catalog of many workers with different ops is not.
void FitOpList(std::vector<v1::OpInfo>* ops, size_t budget);

// GetResults: when the job and its results pass budget bytes, the raw samples are left out (the
// statistics stay); RESOURCE_EXHAUSTED naming the job when even that does not fit.
absl::Status FitResults(JobResults* results, size_t budget);

}  // namespace kbench::server
