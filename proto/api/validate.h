// Request validation shared by coordinator and worker. Every error is INVALID_ARGUMENT and names
// the offending field ("spec.problems[1].shape.dims[0]: ...").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/limits.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"

namespace kbench::api {

int64_t DtypeBytes(v1::Dtype d);

// Checks what needs no catalog: every field within its limits (api/limits.h, CheckSpecBounds), op
// named, settings finite and in range, enums known, shapes well-formed.
absl::Status ValidateSpecStructure(const v1::JobSpec& spec);

// Bytes the problem's tensors occupy, from the op's tensor list; errors on overflow or missing dims.
absl::StatusOr<int64_t> FootprintBytes(const v1::OpInfo& op, const v1::Problem& problem);

// Checks the spec against an op of the catalog and completes it: positional dims get the op's names
// and are put in the op's order. max_memory_bytes: the most memory a matching device has (0: skip).
absl::Status ResolveAgainstOp(const v1::OpInfo& op, int64_t max_memory_bytes, v1::JobSpec* spec);

// One explicit shape against the op, as ResolveAgainstOp resolves each of a spec's: the op's dims in
// its order with their names, the derived ones filled (a shape may leave them out), each within the
// op's bounds; the dtype, where set, one the op supports; the flags the op's. `field` prefixes errors.
absl::StatusOr<v1::Problem> ResolveShape(const v1::OpInfo& op, const v1::Problem& shape,
                                         const std::string& field = "shape");

// The preset an A/B compare measures when it names no problem: one production shape per op.
inline constexpr char kCiPreset[] = "ci";

// Expands a resolved spec's problems (presets and shapes) x dtypes into concrete problems, in order.
// Shapes carry their own dtype when set; otherwise they run for each requested dtype. A spec with
// no problem gets the op's "small" preset, or for an A/B spec (spec.ab set) its kCiPreset where the
// op has one (a plugin built before it had none: "small" then).
std::vector<v1::Problem> ExpandProblems(const v1::OpInfo& op, const v1::JobSpec& spec);

// The variants a spec selects, in catalog order (all when the spec names none).
std::vector<const v1::VariantInfo*> SelectVariants(const v1::OpInfo& op, const v1::JobSpec& spec);

}  // namespace kbench::api
