// The runner's side of "a job's problems cross the pipe once": CHECK_PROBLEMS brings a job's problems
// (the planner needs the op's own check of them anyway) and the runner keeps them under the id the
// worker gave; every MEASURE of the job then names its problem by (table, index). A runner started
// after the check (the last one faulted) holds no such table and says so; the worker sends the check
// again. A few tables are kept, newest first, so that jobs planned back to back do not evict each
// other's.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "kbench/runner/runner.pb.h"

namespace kbench::worker {

class ProblemTable {
 public:
  static constexpr size_t kTablesKept = 4;

  // CHECK_PROBLEMS with a nonzero problem_table: keep its problems under that id.
  void Keep(const runner::RunnerRequest& check);

  // MEASURE naming a table: writes the problem into `req`'s `problem` and returns true; a table or
  // index this runner does not hold returns false with `resp` saying so (problem_table_unknown and
  // an error). A MEASURE that carries its problem is left as it is.
  bool Resolve(runner::RunnerRequest& req, runner::RunnerResponse* resp) const;

 private:
  std::deque<std::pair<uint64_t, std::vector<v1::Problem>>> tables_;  // newest first
};

}  // namespace kbench::worker
