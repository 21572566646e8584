// Parsing of shape strings typed by users: "M=4096,N=4096,K=4096" (named) or "8192x4096" (positional,
// named later from the op's dimension order).
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "kbench/v1/common.pb.h"

namespace kbench::api {

absl::StatusOr<v1::Problem> ParseShape(absl::string_view text);

}  // namespace kbench::api
