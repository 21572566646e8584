// Reading the PEM files of TLS (certificates, keys, CA bundles) for the server and the channels.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench::api {

// The file's contents. INVALID_ARGUMENT naming `what` (the flag, e.g. "--tls-cert") and the path when
// the file cannot be read, is empty, or holds no PEM block ("-----BEGIN ").
absl::StatusOr<std::string> ReadPemFile(const std::string& path, absl::string_view what);

}  // namespace kbench::api
