// The mapping of `submit`'s flags to a JobSpec: problems, measurement settings, GPU selector and
// labels, with every input error caught here and reported against the flag that caused it.
#pragma once

#include "absl/status/statusor.h"
#include "client/args.h"
#include "kbench/v1/job.pb.h"

namespace kbench::client {

// Builds the spec from submit's flags. With --suite the op is left empty (the suite fills it per op)
// and --op, --variant, --preset and --shape are refused. Errors are INVALID_ARGUMENT and start with the
// flag: "--shape: malformed shape ...".
absl::StatusOr<v1::JobSpec> BuildJobSpec(const ParsedArgs& args);

}  // namespace kbench::client
