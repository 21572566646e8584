// The worker's on-disk cache of kernel plugins, by content: DIR/<sha256>.so. A plugin missing from
// it is fetched (from the coordinator's GetPlugin stream) into a temporary file, hashed as it
// arrives, and renamed into place only when its SHA-256 is the one asked for. The worker never
// loads these files: it hands their paths to its runner.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench::worker {

// Writes the plugin's bytes through `write`, in order; `write`'s error ends the fetch.
using PluginFetcher =
    std::function<absl::Status(const std::string& sha256, const std::function<absl::Status(absl::string_view)>& write)>;

class PluginCache {
 public:
  // max_bytes: a fetched plugin larger than this is refused. The directory is made absolute: the
  // runner that opens the plugins works in its own private directory (isolation/child_env.h).
  PluginCache(std::string dir, int64_t max_bytes) : dir_(Absolute(std::move(dir))), max_bytes_(max_bytes) {}

  // The path of the plugin, fetched first when it is not cached (or the cached file's hash is wrong).
  // INVALID_ARGUMENT for a malformed hash; DATA_LOSS when the fetched bytes hash otherwise.
  absl::StatusOr<std::string> Ensure(const std::string& sha256, const PluginFetcher& fetch);

  const std::string& dir() const { return dir_; }

 private:
  std::string PathOf(const std::string& sha256) const { return dir_ + "/" + sha256 + ".so"; }
  static std::string Absolute(std::string dir);

  const std::string dir_;
  const int64_t max_bytes_;
  std::mutex mu_;
  std::set<std::string> verified_;  // Guarded by mu_. Hashed once by this process.
};

}  // namespace kbench::worker
