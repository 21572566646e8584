// Uploading a kernel plugin (a build of libkbench_kernels.so) to the coordinator: hashed here first,
// skipped when the coordinator holds those bytes already, else streamed in 1 MiB messages.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/commands.h"

namespace kbench::client {

struct UploadedPlugin {
  std::string sha256;
  int64_t size_bytes = 0;
  bool uploaded = false;  // False: the coordinator had it already.
};

// NOT_FOUND when the file cannot be read; the coordinator's error otherwise (PERMISSION_DENIED
// without the plugin role, RESOURCE_EXHAUSTED over its size limit).
absl::StatusOr<UploadedPlugin> UploadPlugin(const Connection& conn, const std::string& path);

// UploadPlugin for the file of `--flag` of `command`: reports it on io.err and returns the hash;
// nullopt when it failed, the error reported and the exit status in *exit (usage for a file that
// cannot be read).
std::optional<std::string> UploadPluginFlag(const Connection& conn, const std::string& command, const std::string& flag,
                                            const std::string& path, Io& io, int* exit);

}  // namespace kbench::client
