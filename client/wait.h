// Following submitted jobs to the end (`submit --wait`): polls the coordinator and shows progress.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "kbench/v1/job.pb.h"

namespace kbench::client {

// Polls GetJob every io.poll_interval until every job is SUCCEEDED, FAILED or CANCELLED, and returns
// the jobs in the order of `ids`. Progress goes to io.err: one redrawn line on a terminal, else one
// line per change. Ctrl-C (io.interrupted) returns CANCELLED and leaves the jobs running. A
// coordinator that is unreachable for longer than `kUnreachableMs` ends the wait with its error.
inline constexpr int64_t kUnreachableMs = 30'000;
absl::StatusOr<std::vector<v1::Job>> WaitForJobs(const Connection& conn, const std::vector<std::string>& ids, Io& io);

}  // namespace kbench::client
