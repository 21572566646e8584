// `kernels --op OP --contract`: an op's launch contract for custom kernels as text (signature,
// parameters, default launch, rules) followed by its compilable starting template, or as JSON.
#pragma once

#include <string>

#include "kbench/v1/catalog.pb.h"

namespace kbench::client {

// Text for a terminal; json: the kbench.v1.LaunchContract message.
std::string FormatContract(const v1::OpInfo& op, bool json);

}  // namespace kbench::client
