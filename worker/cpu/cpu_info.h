// What the CPU backend reports about its host: model, threads, memory, last-level cache, kernel.
// Parsers take file contents so they are tested on fixed text; Read* touches /proc and /sys.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "kbench/v1/device.pb.h"

namespace kbench::worker {

// Used when sysfs says nothing about caches (some containers): a typical server LLC.
inline constexpr int64_t kFallbackLlcBytes = int64_t{32} << 20;

struct CpuHostInfo {
  std::string model;            // /proc/cpuinfo "model name"
  int threads = 1;              // Hardware threads this process may run on.
  int64_t memory_bytes = 0;     // /proc/meminfo MemTotal
  int64_t llc_bytes = 0;        // Largest cache level of cpu0
  std::string kernel_release;   // uname -r
  std::string hostname;
  int clock_khz = 0;            // cpuinfo_max_freq, else "cpu MHz"
};

std::string ParseCpuModel(absl::string_view cpuinfo);         // "" when absent
int ParseCpuClockKhz(absl::string_view cpuinfo);              // first "cpu MHz" in kHz; 0 when absent
int64_t ParseMemTotalBytes(absl::string_view meminfo);        // 0 when absent
int64_t ParseCacheSizeBytes(absl::string_view text);          // "32768K", "1M", "512" -> bytes; 0 if bad

// FNV-1a, 64-bit: a hash that is the same in every build (std::hash is not).
uint64_t StableHash64(absl::string_view s);
// "cpu-" + 16 hex digits of the host name's hash: stable across restarts, distinct per host.
std::string CpuDeviceUuid(absl::string_view hostname);

int UsableThreads();
CpuHostInfo ReadCpuHostInfo();
// device_index >= 0: one of several CPU "devices" of one worker (kbench-worker --cpu-devices, for
// tests of the multi-device paths): uuid "<host uuid>-cpu<i>" and that index; -1: the host itself.
v1::DeviceInfo MakeCpuDeviceInfo(const CpuHostInfo& host, int device_index = -1);

}  // namespace kbench::worker
