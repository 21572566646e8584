// NVML, loaded at run time (dlopen), for clocks, throttle reasons, temperature and ECC. A node
// without NVML still works: every read then returns nullopt and results say clocks are unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace kbench::worker {

struct ClockState {
  uint32_t sm_clock_mhz = 0;
  uint32_t max_sm_clock_mhz = 0;
  uint32_t memory_clock_mhz = 0;
  uint32_t power_mw = 0;  // Board power draw; 0: unknown.
  uint64_t throttle_reasons = 0;  // NVML clocks-event reason bits.
  uint32_t temperature_c = 0;
  bool ecc_enabled = false;
  // Power cap, hardware slowdown, thermal or power-brake slowdown (not idle or app clocks).
  bool throttled() const { return (throttle_reasons & 0xECull) != 0; }
};

class Nvml {
 public:
  // The process-wide instance; nullptr when libnvidia-ml cannot be loaded or initialized.
  static Nvml* Get();
  // uuid as the CUDA runtime formats it: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
  std::optional<ClockState> Read(const std::string& uuid);
  // Percent of NVML's last sample period (1/6 s to 1 s) in which a kernel ran; nullopt when unknown.
  std::optional<uint32_t> UtilizationPercent(const std::string& uuid);
  // The driver release ("570.124.06"); "" when unknown.
  std::string DriverRelease();
  // Application (target) clocks, SM and memory, in MHz; 0 each when unknown.
  std::pair<uint32_t, uint32_t> ApplicationClocksMhz(const std::string& uuid);

 private:
  Nvml() = default;
  bool Load();
  void* lib_ = nullptr;
  int (*device_by_uuid_)(const char*, void**) = nullptr;
  int (*clock_info_)(void*, int, unsigned*) = nullptr;
  int (*max_clock_info_)(void*, int, unsigned*) = nullptr;
  int (*throttle_reasons_)(void*, unsigned long long*) = nullptr;
  int (*temperature_)(void*, int, unsigned*) = nullptr;
  int (*ecc_mode_)(void*, int*, int*) = nullptr;
  int (*utilization_)(void*, unsigned*) = nullptr;  // nvmlUtilization_t: {gpu, memory} percent
  int (*power_usage_)(void*, unsigned*) = nullptr;   // milliwatts
  int (*driver_version_)(char*, unsigned) = nullptr;
  int (*applications_clock_)(void*, int, unsigned*) = nullptr;
};

}  // namespace kbench::worker
