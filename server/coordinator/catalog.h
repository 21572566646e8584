// The fleet's kernel catalog: the union of what registered workers advertise.
#pragma once

#include <string>
#include <vector>

#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::server {

// Union of ops by name, sorted by name. For an op several workers have, the first worker's copy gives
// its description, dims, tensors and limits; variants, presets, dtypes and flags are united by name
// (first seen wins), keeping the order in which they were first seen. The custom-kernel launch contract
// comes from the first worker that has one.
std::vector<v1::OpInfo> MergeCatalogs(const std::vector<const v1::WorkerInfo*>& workers);

// The bytes of a worker's catalog, equal for two workers exactly when their catalogs are (deterministic
// serialization). Workers of one build share a catalog: merging a catalog already merged adds nothing,
// so the merge need only see one worker per key.
std::string CatalogKey(const v1::WorkerInfo& worker);

// MergeCatalogs(workers), merging each distinct catalog once (the first worker that has it).
std::vector<v1::OpInfo> MergeDistinctCatalogs(const std::vector<const v1::WorkerInfo*>& workers);

}  // namespace kbench::server
