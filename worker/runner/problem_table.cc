// A runner's kept problem tables; see problem_table.h.
#include "worker/runner/problem_table.h"

#include "absl/strings/str_cat.h"

namespace kbench::worker {

void ProblemTable::Keep(const runner::RunnerRequest& check) {
  if (check.problem_table() == 0) return;
  for (auto it = tables_.begin(); it != tables_.end(); ++it)
    if (it->first == check.problem_table()) {
      tables_.erase(it);
      break;
    }
  tables_.emplace_front(check.problem_table(),
                        std::vector<v1::Problem>(check.problems().begin(), check.problems().end()));
  if (tables_.size() > kTablesKept) tables_.pop_back();
}

bool ProblemTable::Resolve(runner::RunnerRequest& req, runner::RunnerResponse* resp) const {
  if (req.problem_table() == 0) return true;
  for (const auto& [id, problems] : tables_) {
    if (id != req.problem_table()) continue;
    if (req.problem_index() < 0 || static_cast<size_t>(req.problem_index()) >= problems.size()) break;
    *req.mutable_problem() = problems[static_cast<size_t>(req.problem_index())];
    return true;
  }
  resp->set_problem_table_unknown(true);
  resp->set_error(absl::StrCat("this runner holds no problem ", req.problem_index(), " of table ",
                               req.problem_table(), " (it started after the job's check)"));
  return false;
}

}  // namespace kbench::worker
