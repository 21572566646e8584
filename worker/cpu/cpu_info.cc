#include "worker/cpu/cpu_info.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench::worker {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Value of the first "key : value" line whose key is `key`.
std::string FieldValue(absl::string_view text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits(':', 1));
    if (absl::StripAsciiWhitespace(kv.first) == key) return std::string(absl::StripAsciiWhitespace(kv.second));
  }
  return "";
}

}  // namespace

std::string ParseCpuModel(absl::string_view cpuinfo) { return FieldValue(cpuinfo, "model name"); }

int ParseCpuClockKhz(absl::string_view cpuinfo) {
  double mhz = 0;
  if (!absl::SimpleAtod(FieldValue(cpuinfo, "cpu MHz"), &mhz)) return 0;
  return static_cast<int>(mhz * 1000);
}

int64_t ParseMemTotalBytes(absl::string_view meminfo) {
  // "MemTotal:       131891424 kB"
  std::string v = FieldValue(meminfo, "MemTotal");
  absl::string_view num = v;
  const bool kb = absl::ConsumeSuffix(&num, " kB");
  int64_t n = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(num), &n)) return 0;
  return kb ? n * 1024 : n;
}

int64_t ParseCacheSizeBytes(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  int64_t scale = 1;
  if (absl::ConsumeSuffix(&t, "K")) scale = int64_t{1} << 10;
  else if (absl::ConsumeSuffix(&t, "M")) scale = int64_t{1} << 20;
  else if (absl::ConsumeSuffix(&t, "G")) scale = int64_t{1} << 30;
  int64_t n = 0;
  if (!absl::SimpleAtoi(t, &n) || n < 0) return 0;
  return n * scale;
}

uint64_t StableHash64(absl::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string CpuDeviceUuid(absl::string_view hostname) {
  return absl::StrFormat("cpu-%016x", StableHash64(hostname));
}

int UsableThreads() {
  // The affinity mask, not hardware_concurrency(): a container or taskset may allow fewer CPUs.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

CpuHostInfo ReadCpuHostInfo() {
  CpuHostInfo h;
  const std::string cpuinfo = ReadFile("/proc/cpuinfo");
  struct utsname u {};
  const bool have_uname = uname(&u) == 0;
  h.model = ParseCpuModel(cpuinfo);
  if (h.model.empty()) h.model = absl::StrCat(have_uname ? u.machine : "unknown", " CPU");
  h.threads = UsableThreads();
  h.memory_bytes = ParseMemTotalBytes(ReadFile("/proc/meminfo"));
  if (h.memory_bytes <= 0) h.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  // The last-level cache is the highest data/unified level cpu0 reports.
  int best_level = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", i, "/");
    const std::string type(absl::StripAsciiWhitespace(ReadFile(dir + "type")));
    int level = 0;
    if (type.empty() || type == "Instruction" || !absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(dir + "level")), &level))
      continue;
    const int64_t size = ParseCacheSizeBytes(ReadFile(dir + "size"));
    if (size > 0 && level >= best_level) {
      best_level = level;
      h.llc_bytes = size;
    }
  }
  if (h.llc_bytes <= 0) h.llc_bytes = kFallbackLlcBytes;
  if (have_uname) {
    h.kernel_release = u.release;
    h.hostname = u.nodename;
  }
  int max_khz = 0;
  if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")),
                       &max_khz) && max_khz > 0)
    h.clock_khz = max_khz;
  else
    h.clock_khz = ParseCpuClockKhz(cpuinfo);
  return h;
}

v1::DeviceInfo MakeCpuDeviceInfo(const CpuHostInfo& host, int device_index) {
  v1::DeviceInfo d;
  d.set_backend(v1::BACKEND_CPU);
  d.set_name(host.model);
  d.set_uuid(device_index < 0 ? CpuDeviceUuid(host.hostname)
                               : absl::StrCat(CpuDeviceUuid(host.hostname), "-cpu", device_index));
  d.set_index(std::max(device_index, 0));
  d.set_multiprocessor_count(host.threads);
  d.set_memory_bytes(host.memory_bytes);
  d.set_l2_cache_bytes(host.llc_bytes);
  d.set_driver_version(host.kernel_release);
#if defined(__clang__)
  d.set_runtime_version(absl::StrCat("clang ", __clang_version__));
#elif defined(__GNUC__)
  d.set_runtime_version(absl::StrCat("gcc ", __VERSION__));
#endif
  d.set_clock_khz(host.clock_khz);
  return d;
}

}  // namespace kbench::worker
