// A worker's report checked against the job it is for, before anything of it is stored: results of
// the job (id), of its op and variants, at an index the job plans, and progress that counts the job's
// results. An ordinary job is planned by the leasing worker from the catalog it registered, which the
// coordinator holds too, so both count the same results; a plugin or A/B job is planned from catalogs
// only the worker's runner sees, so there the report's own total (and the spec's op and variants) bound it.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::server {

// What a job's results may be.
struct JobResultShape {
  int32_t planned = -1;             // Results the job plans; -1: the coordinator cannot tell.
  std::string op;                   // The op every result is of; empty: any (an A/B job without op).
  std::set<std::string> variants;   // The variants results may name; empty: any.
};

// The shape of job's results; worker: the leasing worker's registration, or null when unknown.
JobResultShape ResultShapeOf(const v1::JobSpec& spec, const v1::WorkerInfo* worker);

// INVALID_ARGUMENT naming the field ("results[0].index: 999 is beyond the job's 1 planned results")
// when the report does not fit the job; progress may be null.
absl::Status CheckReportAgainstJob(const v1::Job& job, const JobResultShape& shape, const v1::Progress* progress,
                                   const std::vector<v1::Result>& results);

}  // namespace kbench::server
