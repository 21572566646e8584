// The custom kernels of a JobSpec (kbench/v1/custom.proto, worker/custom/README.md): their validation,
// shared by the client, the coordinator and the worker, and the names they run under.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "api/limits.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"

namespace kbench::api {

// The limits (kMaxCustomSourceBytes, kMaxCustomVariantsPerJob, ...) are in api/limits.h.
inline constexpr char kCustomVariantPrefix[] = "custom:";

// "custom:<name>": the variant name a custom kernel's results carry.
std::string CustomVariantName(const v1::CustomVariant& custom);
bool IsCustomVariantName(absl::string_view variant);

// Whether NVRTC may be given this option from a job: macros, optimisation and precision switches,
// register limits, the language standard. Never paths (-I, --pre-include) or the architecture, which
// the worker sets.
bool IsAllowedCompileOption(absl::string_view option);

// Checks what needs no catalog: counts and sizes, names, kinds, block and grid syntax, options,
// dtypes, time limit. INVALID_ARGUMENT naming the field ("spec.custom_variants[0].source: ...").
absl::Status ValidateCustomVariants(const v1::JobSpec& spec);

// Checks the custom variants against the op: the op has a launch contract (on these workers), the
// dtypes are the op's, the grid reads only the op's dims and the block size; and that every
// "custom:<name>" in spec.variants names one of them.
absl::Status ResolveCustomVariants(const v1::OpInfo& op, const v1::JobSpec& spec);

}  // namespace kbench::api
