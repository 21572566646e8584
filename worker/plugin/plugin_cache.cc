// Content-addressed plugin files; see plugin_cache.h.
#include "worker/plugin/plugin_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "api/plugin_spec.h"
#include "api/sha256.h"

namespace kbench::worker {

std::string PluginCache::Absolute(std::string dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  return ec || dir.empty() ? dir : p.string();
}

absl::StatusOr<std::string> PluginCache::Ensure(const std::string& sha256, const PluginFetcher& fetch) {
  if (!api::IsSha256Hex(sha256))
    return absl::InvalidArgumentError(absl::StrCat("plugin '", sha256, "': not a SHA-256"));
  std::lock_guard<std::mutex> lock(mu_);  // One fetch at a time; a job needs at most two plugins.
  const std::string path = PathOf(sha256);
  if (verified_.contains(sha256) && access(path.c_str(), R_OK) == 0) return path;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return absl::InternalError(absl::StrCat("plugin cache ", dir_, ": ", ec.message()));
  if (absl::StatusOr<std::string> have = api::Sha256OfFile(path); have.ok()) {
    if (*have == sha256) {
      verified_.insert(sha256);
      return path;
    }
    std::filesystem::remove(path, ec);  // A damaged file: fetch it again.
  }
  const std::string tmp = absl::StrCat(path, ".part.", getpid());
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("plugin cache: cannot write ", tmp));
  api::Sha256 hash;
  int64_t size = 0;
  absl::Status s = fetch(sha256, [&](absl::string_view bytes) -> absl::Status {
    size += static_cast<int64_t>(bytes.size());
    if (size > max_bytes_)
      return absl::ResourceExhaustedError(absl::StrCat("plugin ", sha256, " is larger than this worker's limit of ",
                                                       max_bytes_, " bytes"));
    hash.Update(bytes);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("plugin cache: write to ", tmp, " failed"));
  });
  out.close();
  if (s.ok() && !out) s = absl::InternalError(absl::StrCat("plugin cache: write to ", tmp, " failed"));
  const std::string got = hash.HexDigest();
  if (s.ok() && got != sha256)
    s = absl::DataLossError(absl::StrCat("plugin ", sha256, ": the fetched bytes hash to ", got));
  if (!s.ok()) {
    std::filesystem::remove(tmp, ec);
    return s;
  }
  chmod(tmp.c_str(), 0555);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::filesystem::remove(tmp, ec);
    return absl::InternalError(absl::StrCat("plugin cache: cannot rename into ", path));
  }
  verified_.insert(sha256);
  return path;
}

}  // namespace kbench::worker
