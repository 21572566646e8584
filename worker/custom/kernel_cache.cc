#include "worker/custom/kernel_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kbench::worker {
namespace {

constexpr char kMagic[] = "kbench-kernel-cache 1";

void AppendField(std::string* out, const std::string& field) { absl::StrAppend(out, field.size(), "\n", field); }

bool ReadField(std::istream& in, std::string* out) {
  std::string len_line;
  size_t len = 0;
  if (!std::getline(in, len_line) || !absl::SimpleAtoi(len_line, &len) || len > (size_t{256} << 20)) return false;
  out->resize(len);
  return static_cast<bool>(in.read(out->data(), static_cast<std::streamsize>(len)));
}

}  // namespace

std::string KernelCache::DefaultDir() {
  if (const char* d = std::getenv("KBENCH_KERNEL_CACHE"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return absl::StrCat(d, "/kbench/kernels");
  if (const char* d = std::getenv("HOME"); d && *d) return absl::StrCat(d, "/.cache/kbench/kernels");
  return absl::StrCat("/tmp/kbench-kernels-", getuid());
}

std::string KernelCache::PathOf(const std::string& key) const { return absl::StrCat(dir_, "/", key, ".kernel"); }

std::optional<CachedKernel> KernelCache::Get(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(PathOf(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string magic;
  if (!std::getline(in, magic) || magic != kMagic) return std::nullopt;
  CachedKernel k;
  if (!ReadField(in, &k.image_kind) || !ReadField(in, &k.entry) || !ReadField(in, &k.compile_log) ||
      !ReadField(in, &k.image))
    return std::nullopt;
  return k;
}

absl::Status KernelCache::Put(const std::string& key, const CachedKernel& k) const {
  if (dir_.empty()) return absl::OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("kernel cache: cannot create ", dir_, ": ", ec.message()));
  std::string data = absl::StrCat(kMagic, "\n");
  AppendField(&data, k.image_kind);
  AppendField(&data, k.entry);
  AppendField(&data, k.compile_log);
  AppendField(&data, k.image);
  const std::string tmp = absl::StrCat(PathOf(key), ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return absl::UnavailableError(absl::StrCat("kernel cache: cannot write ", tmp));
  }
  std::filesystem::rename(tmp, PathOf(key), ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return absl::UnavailableError(absl::StrCat("kernel cache: cannot rename into ", PathOf(key)));
  }
  return absl::OkStatus();
}

}  // namespace kbench::worker
