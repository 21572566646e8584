// A job turned into what the runner executes (plan/planner.h makes it; runner/job_runner.h runs it):
// the items in result order, each one runner request. The same shape for every kind of job: the
// built-in suite, custom kernels, a job's plugin, and A/B pairs of two libraries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kbench/v1/common.pb.h"
#include "kbench/v1/job.pb.h"

namespace kbench::worker {

// One side of an item: a variant of a kernel library.
struct ItemSide {
  std::string variant;  // A built-in or plugin variant, or "custom:<name>" (PlanItem::custom_index).
  std::string path;     // The plugin file in the worker's cache; empty: the worker's own suite.
  std::string sha256;   // Empty: the worker's own suite.
};

struct PlanItem {
  int32_t first_index = 0;  // Result index of the base (A/B: the head's is first_index + 1).
  std::string op;
  v1::Problem problem;      // Named dims in the op's order, a dtype, and the preset it came from.
  int32_t problem_index = -1;  // >= 0: entry of JobPlan::problem_table that is `problem`.
  ItemSide base;            // The only side unless `ab`.
  int custom_index = -1;    // >= 0: spec.custom_variants(custom_index), compiled in the runner.
  bool ab = false;
  ItemSide head;
  int32_t pair = 0;         // A/B: the pair number both results carry.
};

struct JobPlan {
  v1::JobSpec spec;                  // Resolved against the op (an ordinary job).
  v1::MeasurementSettings settings;  // Defaults filled.
  int rounds = 0;                    // A/B blocks per side.
  std::vector<PlanItem> items;
  int32_t results_total = 0;         // Two per A/B item, one per other item.
  // The job's problems as the runner keeps them since the planner's check (runner/problem_table.h):
  // its id (0: none; each item then carries its problem) and its entries, to send again to a runner
  // that started after the check.
  uint64_t problem_table = 0;
  std::vector<v1::Problem> problems;
};

}  // namespace kbench::worker
