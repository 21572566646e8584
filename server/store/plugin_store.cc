// The content-addressed plugin directory; see plugin_store.h.
#include "server/store/plugin_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "api/plugin_spec.h"
#include "api/quote.h"

namespace kbench::server {

absl::StatusOr<std::unique_ptr<PluginStore>> PluginStore::Open(std::string dir, int64_t max_bytes) {
  if (dir.empty()) return absl::InvalidArgumentError("plugin directory: empty path");
  if (max_bytes <= 0) return absl::InvalidArgumentError("plugin size limit: must be > 0");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("plugin directory ", dir, ": ", ec.message()));
  return std::unique_ptr<PluginStore>(new PluginStore(std::move(dir), max_bytes));
}

PluginStore::Upload::Upload(const PluginStore* store, std::string tmp_path)
    : store_(store), tmp_path_(std::move(tmp_path)), out_(tmp_path_, std::ios::binary | std::ios::trunc) {}

PluginStore::Upload::~Upload() {
  if (!finished_) {
    out_.close();
    std::remove(tmp_path_.c_str());
  }
}

absl::Status PluginStore::Upload::Append(absl::string_view bytes) {
  size_ += static_cast<int64_t>(bytes.size());
  if (size_ > store_->max_bytes_)
    return absl::ResourceExhaustedError(absl::StrCat("plugin larger than this coordinator's limit of ",
                                                     store_->max_bytes_, " bytes (--max_plugin_bytes)"));
  hash_.Update(bytes);
  out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out_) return absl::InternalError(absl::StrCat("cannot write ", tmp_path_));
  return absl::OkStatus();
}

absl::StatusOr<StoredPlugin> PluginStore::Upload::Finish(absl::string_view expected_sha256) {
  if (size_ == 0) return absl::InvalidArgumentError("empty plugin upload: no bytes arrived");
  out_.close();
  if (!out_) return absl::InternalError(absl::StrCat("cannot write ", tmp_path_));
  StoredPlugin stored{.sha256 = hash_.HexDigest(), .size_bytes = size_};
  if (!expected_sha256.empty() && expected_sha256 != stored.sha256)
    return absl::InvalidArgumentError(absl::StrCat("expected_sha256: the uploaded bytes hash to ", stored.sha256,
                                                   ", not ", api::Quote(expected_sha256), " (damaged in transit?)"));
  const std::string final_path = absl::StrCat(store_->dir_, "/", stored.sha256, ".so");
  struct stat st;
  if (stat(final_path.c_str(), &st) == 0 && st.st_size == stored.size_bytes) {
    stored.already_stored = true;  // Same hash, same size: the same bytes. The temporary file goes.
    return stored;
  }
  chmod(tmp_path_.c_str(), 0444);
  if (std::rename(tmp_path_.c_str(), final_path.c_str()) != 0)
    return absl::InternalError(absl::StrCat("cannot store ", final_path));
  finished_ = true;
  return stored;
}

absl::StatusOr<std::unique_ptr<PluginStore::Upload>> PluginStore::BeginUpload() const {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = absl::StrCat(dir_, "/.upload-", getpid(), "-", counter++);
  std::unique_ptr<Upload> u(new Upload(this, tmp));
  if (!u->out_) return absl::InternalError(absl::StrCat("cannot create ", tmp));
  return u;
}

absl::StatusOr<std::string> PluginStore::PathOf(absl::string_view sha256) const {
  if (!api::IsSha256Hex(sha256))
    return absl::InvalidArgumentError(absl::StrCat("sha256: ", api::Quote(sha256), " is not a SHA-256 (64 lower-case hex digits)"));
  std::string path = absl::StrCat(dir_, "/", sha256, ".so");
  if (access(path.c_str(), R_OK) != 0) return absl::NotFoundError(absl::StrCat("no plugin ", sha256, " on this coordinator"));
  return path;
}

absl::StatusOr<int64_t> PluginStore::SizeOf(absl::string_view sha256) const {
  absl::StatusOr<std::string> path = PathOf(sha256);
  if (!path.ok()) return path.status();
  struct stat st;
  if (stat(path->c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat("no plugin ", sha256, " on this coordinator"));
  return static_cast<int64_t>(st.st_size);
}

}  // namespace kbench::server
