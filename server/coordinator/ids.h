// Random identifiers for jobs, leases and workers ("j-3f9a0c...", "l-...", "w-...").
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace kbench::server {

// prefix + "-" + hex_chars random lowercase hex digits. Thread-safe.
std::string RandomId(absl::string_view prefix, int hex_chars);

}  // namespace kbench::server
