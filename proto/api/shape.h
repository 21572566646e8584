// Parsing of shape strings typed by users: "M=4096,N=4096,K=4096" (named) or "8192x4096" (positional,
// named later from the op's dimension order), either followed by the op's flags as bare names:
// "8192x32x8x128,gptj", "B=1,H=16,H_kv=16,N_q=4096,N_kv=4096,d=128,causal".
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
