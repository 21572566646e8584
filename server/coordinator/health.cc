// Fleet medians per GPU model and the comparison against them.
#include "server/coordinator/health.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/coordinator/regression.h"

namespace kbench::server {
namespace {

struct Ceiling {
  const char* what;
  const char* unit;
  double DeviceCeilings::*field;
};

constexpr Ceiling kCeilings[] = {
    {"copy bandwidth", "B/s", &DeviceCeilings::copy_bytes_per_second},
    {"f32 peak", "FLOP/s", &DeviceCeilings::f32_flops_per_second},
    {"bf16 peak", "FLOP/s", &DeviceCeilings::bf16_flops_per_second},
};

double PeakOf(const v1::Calibration& c, const std::string& dtype) {
  auto it = c.peak_flops_per_second().find(dtype);
  return it == c.peak_flops_per_second().end() ? 0 : it->second;
}

}  // namespace

const v1::Calibration* CalibrationOf(const v1::WorkerInfo& info, int device_index) {
  if (device_index < 0 || device_index >= info.devices_size()) return nullptr;
  const std::string& uuid = info.devices(device_index).uuid();
  if (!uuid.empty())
    for (const v1::Calibration& c : info.calibrations())
      if (c.device_uuid() == uuid) return &c;
  if (device_index < info.calibrations_size()) {
    const v1::Calibration& c = info.calibrations(device_index);
    // Another device's calibration is not this one's, whatever its position.
    if (uuid.empty() || c.device_uuid().empty()) return &c;
  }
  return nullptr;
}

DeviceCeilings CeilingsOf(const v1::WorkerInfo& info, int device_index) {
  DeviceCeilings out;
  if (device_index < 0 || device_index >= info.devices_size()) return out;
  out.gpu_model = info.devices(device_index).name();
  const v1::Calibration* cal = CalibrationOf(info, device_index);
  if (cal == nullptr) return out;
  out.copy_bytes_per_second = cal->copy_bytes_per_second();
  out.f32_flops_per_second = PeakOf(*cal, "f32");
  out.bf16_flops_per_second = PeakOf(*cal, "bf16");
  return out;
}

std::vector<WorkerHealth> AssessFleetHealth(const std::vector<HealthInput>& workers, double margin) {
  // (model, ceiling index) -> values over counting devices.
  std::map<std::pair<std::string, int>, std::vector<double>> values;
  for (const HealthInput& w : workers) {
    if (!w.counts_for_median) continue;
    for (int d = 0; d < w.info->devices_size(); ++d) {
      const DeviceCeilings c = CeilingsOf(*w.info, d);
      for (int k = 0; k < static_cast<int>(std::size(kCeilings)); ++k)
        if (c.*kCeilings[k].field > 0) values[{c.gpu_model, k}].push_back(c.*kCeilings[k].field);
    }
  }
  std::map<std::pair<std::string, int>, std::pair<double, size_t>> medians;  // -> (median, devices)
  for (auto& [key, v] : values) medians[key] = {Median(v), v.size()};

  std::vector<WorkerHealth> out(workers.size());
  for (size_t i = 0; i < workers.size(); ++i) {
    std::vector<std::string> reasons;
    out[i].device_unhealthy.assign(workers[i].info->devices_size(), false);
    for (int d = 0; d < workers[i].info->devices_size(); ++d) {
      const DeviceCeilings c = CeilingsOf(*workers[i].info, d);
      for (int k = 0; k < static_cast<int>(std::size(kCeilings)); ++k) {
        const double value = c.*kCeilings[k].field;
        auto it = medians.find({c.gpu_model, k});
        if (value <= 0 || it == medians.end()) continue;
        const auto [median, count] = it->second;
        if (value >= median * (1 - margin)) continue;
        out[i].device_unhealthy[d] = true;
        reasons.push_back(absl::StrFormat("device %d (%s): %s %.3g %s is %.0f%% below the median %.3g %s of %d devices",
                                          d, c.gpu_model, kCeilings[k].what, value, kCeilings[k].unit,
                                          100 * (1 - value / median), median, kCeilings[k].unit, count));
      }
    }
    out[i].unhealthy = !reasons.empty();
    out[i].reason = absl::StrJoin(reasons, "; ");
  }
  return out;
}

}  // namespace kbench::server
