#include "worker/cuda/nvml.h"

#include <dlfcn.h>

#include <mutex>

namespace kbench::worker {
namespace {
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;
constexpr int kNvmlTemperatureGpu = 0;
}  // namespace

Nvml* Nvml::Get() {
  static Nvml* instance = [] {
    auto* n = new Nvml();
    if (!n->Load()) {
      delete n;
      return static_cast<Nvml*>(nullptr);
    }
    return n;
  }();
  return instance;
}

bool Nvml::Load() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return false;
  auto sym = [&](const char* name) { return dlsym(lib_, name); };
  auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  device_by_uuid_ = reinterpret_cast<decltype(device_by_uuid_)>(sym("nvmlDeviceGetHandleByUUID"));
  clock_info_ = reinterpret_cast<decltype(clock_info_)>(sym("nvmlDeviceGetClockInfo"));
  max_clock_info_ = reinterpret_cast<decltype(max_clock_info_)>(sym("nvmlDeviceGetMaxClockInfo"));
  throttle_reasons_ = reinterpret_cast<decltype(throttle_reasons_)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (!throttle_reasons_)
    throttle_reasons_ = reinterpret_cast<decltype(throttle_reasons_)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  temperature_ = reinterpret_cast<decltype(temperature_)>(sym("nvmlDeviceGetTemperature"));
  ecc_mode_ = reinterpret_cast<decltype(ecc_mode_)>(sym("nvmlDeviceGetEccMode"));
  utilization_ = reinterpret_cast<decltype(utilization_)>(sym("nvmlDeviceGetUtilizationRates"));
  power_usage_ = reinterpret_cast<decltype(power_usage_)>(sym("nvmlDeviceGetPowerUsage"));
  driver_version_ = reinterpret_cast<decltype(driver_version_)>(sym("nvmlSystemGetDriverVersion"));
  applications_clock_ = reinterpret_cast<decltype(applications_clock_)>(sym("nvmlDeviceGetApplicationsClock"));
  return init && device_by_uuid_ && clock_info_ && init() == 0;
}

namespace {
std::mutex nvml_mu;  // NVML is thread-safe, but keep reads ordered with respect to each other.
}  // namespace

std::optional<uint32_t> Nvml::UtilizationPercent(const std::string& uuid) {
  std::lock_guard<std::mutex> lock(nvml_mu);
  void* dev = nullptr;
  unsigned rates[2] = {0, 0};
  if (!utilization_ || device_by_uuid_(uuid.c_str(), &dev) != 0 || utilization_(dev, rates) != 0) return std::nullopt;
  return rates[0];
}

std::string Nvml::DriverRelease() {
  std::lock_guard<std::mutex> lock(nvml_mu);
  char buf[96] = {};
  if (!driver_version_ || driver_version_(buf, sizeof buf) != 0) return "";
  return buf;
}

std::pair<uint32_t, uint32_t> Nvml::ApplicationClocksMhz(const std::string& uuid) {
  std::lock_guard<std::mutex> lock(nvml_mu);
  void* dev = nullptr;
  unsigned sm = 0, mem = 0;
  if (!applications_clock_ || device_by_uuid_(uuid.c_str(), &dev) != 0) return {0, 0};
  if (applications_clock_(dev, kNvmlClockSm, &sm) != 0) sm = 0;
  if (applications_clock_(dev, kNvmlClockMem, &mem) != 0) mem = 0;
  return {sm, mem};
}

std::optional<ClockState> Nvml::Read(const std::string& uuid) {
  std::lock_guard<std::mutex> lock(nvml_mu);
  void* dev = nullptr;
  if (device_by_uuid_(uuid.c_str(), &dev) != 0) return std::nullopt;
  ClockState s;
  unsigned v = 0;
  if (clock_info_(dev, kNvmlClockSm, &v) == 0) s.sm_clock_mhz = v;
  if (max_clock_info_ && max_clock_info_(dev, kNvmlClockSm, &v) == 0) s.max_sm_clock_mhz = v;
  if (clock_info_(dev, kNvmlClockMem, &v) == 0) s.memory_clock_mhz = v;
  if (power_usage_ && power_usage_(dev, &v) == 0) s.power_mw = v;
  unsigned long long reasons = 0;
  if (throttle_reasons_ && throttle_reasons_(dev, &reasons) == 0) s.throttle_reasons = reasons;
  if (temperature_ && temperature_(dev, kNvmlTemperatureGpu, &v) == 0) s.temperature_c = v;
  int current = 0, pending = 0;
  if (ecc_mode_ && ecc_mode_(dev, &current, &pending) == 0) s.ecc_enabled = current != 0;
  return s;
}

}  // namespace kbench::worker
