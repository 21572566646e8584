// `submit --source FILE`: a custom kernel (CUDA C++, PTX, cubin or Triton Python) added to the job as variant
// "custom:<name>" under the op's launch contract (worker/custom/README.md), with its launch flags.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "client/args.h"
#include "kbench/v1/job.pb.h"

namespace kbench::client {

// --source, --source-kind, --name, --entry, --block, --grid, --smem, --nvrtc-option, --compile-timeout-ms.
std::vector<FlagSpec> CustomSourceFlagSpecs();

// Reads --source and adds spec.custom_variants[0] from the flags; with --variant, also adds
// "custom:<name>" to spec.variants so that it runs beside the variants named. Nothing without
// --source (and then its companion flags are refused). Errors are INVALID_ARGUMENT naming the flag.
absl::Status AddCustomSource(const ParsedArgs& args, v1::JobSpec* spec);

}  // namespace kbench::client
