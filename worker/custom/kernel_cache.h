// The on-disk cache of compiled custom kernels: one file per key (the SHA-256 of everything that
// decides the compiler's output: source, options, architecture, NVRTC version, dtype, entry), written
// atomically (temporary file, then rename), so runners of several GPUs can share a directory.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace kbench::worker {

struct CachedKernel {
  std::string image_kind;    // "cubin" or "ptx"
  std::string entry;         // The lowered name to look up in the module.
  std::string compile_log;   // The compiler's warnings.
  std::string image;
};

class KernelCache {
 public:
  // Created on first Put; an empty dir disables the cache.
  explicit KernelCache(std::string dir) : dir_(std::move(dir)) {}

  // $KBENCH_KERNEL_CACHE, else $XDG_CACHE_HOME/kbench/kernels, else ~/.cache/kbench/kernels, else
  // /tmp/kbench-kernels-<uid>.
  static std::string DefaultDir();

  // nullopt when absent or unreadable (a damaged entry is a miss, never an error).
  std::optional<CachedKernel> Get(const std::string& key) const;
  absl::Status Put(const std::string& key, const CachedKernel& kernel) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string PathOf(const std::string& key) const;
  std::string dir_;
};

}  // namespace kbench::worker
