// Where the client connects: the coordinator address, bearer token and TLS files, resolved per field
// from flags, then the environment (KBENCH_COORDINATOR, KBENCH_TOKEN, KBENCH_TLS_CA, KBENCH_TLS_CERT,
// KBENCH_TLS_KEY), then a config file, then defaults (plaintext, no token).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/channel.h"

namespace kbench::client {

inline constexpr char kDefaultCoordinator[] = "127.0.0.1:50051";

// What the user gave on the command line; nullopt when a flag was not given.
struct ConnectionFlags {
  std::optional<std::string> coordinator;
  std::optional<std::string> token;
  std::optional<std::string> config;  // Path of the config file.
  std::optional<std::string> tls_ca;    // PEM roots that verify the coordinator: TLS.
  std::optional<std::string> tls_cert;  // PEM client certificate (mTLS), with tls_key.
  std::optional<std::string> tls_key;
};

// The contents of a config file: lines `key = value`, '#' starts a comment.
struct ConfigFile {
  std::optional<std::string> coordinator;
  std::optional<std::string> token;
  std::optional<std::string> tls_ca;  // Keys tls_ca, tls_cert, tls_key.
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
};

// Parses config text; `origin` names the file in error messages ("client.conf:3: ...").
absl::StatusOr<ConfigFile> ParseConfig(absl::string_view text, absl::string_view origin);

// The config file to read: --config, else $KBENCH_CONFIG, else ~/.config/kbench/client.conf.
// `explicit_path` tells whether the user named it (then it must exist).
struct ConfigPath {
  std::string path;  // Empty when none can be determined (no HOME).
  bool explicit_path = false;
};
ConfigPath FindConfigPath(const ConnectionFlags& flags);

// Resolves address and token, reading the process environment and the config file.
absl::StatusOr<api::ChannelOptions> ResolveConnection(const ConnectionFlags& flags);

}  // namespace kbench::client
