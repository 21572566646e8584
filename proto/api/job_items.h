// What an ordinary job (no plugin, not A/B) measures on each of its problems: the one rule that the
// worker's planner (worker/plan/) follows to make its items and the coordinator
// (server/coordinator/coordinator_report_check.cc) follows to count the results it expects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"

namespace kbench::api {

struct PlannedVariant {
  std::string name;       // The result's variant: a built-in name, or "custom:<name>".
  int custom_index = -1;  // >= 0: spec.custom_variants(custom_index); else a built-in variant of the op.
};

// Per problem, in order: the variants SelectVariants picks (catalog order), then the custom variants
// (every one, or those spec.variants names), after the built-in ladder. `spec` is resolved against `op`.
std::vector<PlannedVariant> PlannedVariants(const v1::OpInfo& op, const v1::JobSpec& spec);

// The results such a job plans: ExpandProblems x PlannedVariants.
int64_t PlannedResultCount(const v1::OpInfo& op, const v1::JobSpec& spec);

}  // namespace kbench::api
