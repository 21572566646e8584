// What kbench-load's simulated fleet says: each worker's registration (one CPU device and a catalog of
// synthetic ops about the size of kbench-worker's own), the jobs its clients submit, and the results
// its workers report for them.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::load {

// Ops "load_op_0" .. "load_op_<n-1>": rmsnorm-like {rows, cols} f32/bf16, four CPU variants, three presets.
std::vector<v1::OpInfo> LoadCatalog(int ops);
// Worker i: one CPU device with 64 GiB, the catalog, a calibration.
v1::WorkerInfo LoadWorkerInfo(int i, const std::vector<v1::OpInfo>& catalog);
// The n-th job of a run: one explicit shape on one op of the catalog, `variants` of its variants,
// labelled branch=main every other job so that results are judged against real baselines.
v1::JobSpec LoadJobSpec(int64_t n, int catalog_ops, int variants);

// One planned result of a leased job: its variant and problem, as a worker would plan them.
struct PlannedResult {
  std::string variant;
  v1::Problem problem;
};
// The results a worker with this catalog plans for a leased (resolved) spec, in order.
std::vector<PlannedResult> PlanResults(const std::vector<v1::OpInfo>& catalog, const v1::JobSpec& spec);
// Result `index` of a job: OK, `samples` lognormal raw samples, on the worker's device.
v1::Result LoadResult(const v1::Job& job, int index, const PlannedResult& planned, const v1::DeviceInfo& device,
                      int samples, std::mt19937_64& rng);

}  // namespace kbench::load
