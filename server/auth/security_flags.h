// The coordinator's security flags (defined in security_flags.cc, which only the kbench-coordinator
// binary compiles): --tls-cert, --tls-key, --tls-client-ca, --token-file, --insecure,
// --rate-limit-per-second, --rate-burst.
#pragma once

#include <string>
#include <vector>

#include "server/auth/server_security.h"

namespace kbench::server::auth {

// The flags' names, in the order --help lists them.
const std::vector<std::string>& SecurityFlagNames();
// `names` followed by SecurityFlagNames().
std::vector<std::string> WithSecurityFlags(const std::vector<std::string>& names);
// The flags' values (after absl::ParseCommandLine).
SecurityOptions SecurityOptionsFromFlags();

}  // namespace kbench::server::auth
