// Parsing of shape strings typed by users: "M=4096,N=4096,K=4096" (named) or "8192x4096" (positional,
// named later from the op's dimension order).
#pragma once

#include <vector>

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "kbench/v1/common.pb.h"

namespace kbench::api {

absl::StatusOr<v1::Problem> ParseShape(absl::string_view text);

// Several shapes in one string, separated by ';' (a ',' separates the dims of a named shape):
// "M=4096,N=4096,K=4096;1x14336x4096" is two. Empty parts are skipped; none at all is an error.
absl::StatusOr<std::vector<v1::Problem>> ParseShapeList(absl::string_view text);

}  // namespace kbench::api
