// `kbench-client compare --base-plugin A.so --head-plugin B.so`: the online A/B compare. Uploads
// both kernel libraries (unless the coordinator has them), submits one A/B job (both versions on one
// worker, measured in alternating blocks), follows it, and prints the same before/after report as
// the offline compare, paired by the job's A/B pairs.
#pragma once

#include <vector>

#include "client/args.h"
#include "client/commands.h"
#include "client/format.h"

namespace kbench::client {

// The flags of the online mode (job shape, measurement, selector), for CompareSpec.
std::vector<FlagSpec> AbCompareFlags();
// True when the arguments ask for the online mode (--base-plugin, --head-plugin or --pair).
bool WantsAbCompare(const ParsedArgs& args);
int RunAbCompare(const CommandSpec& spec, const ParsedArgs& args, const ConnectionFlags& globals,
                 const CompareOptions& options, Format format, Io& io);

}  // namespace kbench::client
