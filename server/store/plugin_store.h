// Kernel plugins kept by the coordinator: a content-addressed directory, DIR/<sha256>.so, written
// by UploadPlugin as the bytes stream in (hashed on the way, never held whole in memory) and read
// by GetPlugin for workers. A second upload of the same bytes stores nothing. Coordinator replicas
// that share a database must share this directory too (a shared volume).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/sha256.h"

namespace kbench::server {

inline constexpr int64_t kDefaultMaxPluginBytes = int64_t{256} << 20;  // 256 MiB

struct StoredPlugin {
  std::string sha256;
  int64_t size_bytes = 0;
  bool already_stored = false;
};

class PluginStore {
 public:
  // Creates the directory when missing.
  static absl::StatusOr<std::unique_ptr<PluginStore>> Open(std::string dir, int64_t max_bytes);

  // One upload in progress: a temporary file that becomes DIR/<sha>.so on Finish, or goes away.
  class Upload {
   public:
    ~Upload();
    // RESOURCE_EXHAUSTED once the bytes pass the store's limit.
    absl::Status Append(absl::string_view bytes);
    // INVALID_ARGUMENT when nothing came or `expected_sha256` (when not empty) differs.
    absl::StatusOr<StoredPlugin> Finish(absl::string_view expected_sha256);

   private:
    friend class PluginStore;
    Upload(const PluginStore* store, std::string tmp_path);
    const PluginStore* store_;
    std::string tmp_path_;
    std::ofstream out_;
    api::Sha256 hash_;
    int64_t size_ = 0;
    bool finished_ = false;
  };
  absl::StatusOr<std::unique_ptr<Upload>> BeginUpload() const;

  // The stored file of a plugin and its size: INVALID_ARGUMENT for a malformed hash, NOT_FOUND when
  // not stored.
  absl::StatusOr<std::string> PathOf(absl::string_view sha256) const;
  absl::StatusOr<int64_t> SizeOf(absl::string_view sha256) const;

  int64_t max_bytes() const { return max_bytes_; }
  const std::string& dir() const { return dir_; }

 private:
  PluginStore(std::string dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  const std::string dir_;
  const int64_t max_bytes_;
};

}  // namespace kbench::server
