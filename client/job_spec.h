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
// op_optional: --op may be left out (an A/B compare then covers every op both sides have).
absl::StatusOr<v1::JobSpec> BuildJobSpec(const ParsedArgs& args, bool op_optional = false);

}  // namespace kbench::client
