#include "worker/agent/device_selection.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench::worker {
namespace {

constexpr int kMaxCpuDevices = 64;

absl::StatusOr<std::vector<SelectedDevice>> SelectCpu(const DeviceSelectionFlags& flags) {
  if (!flags.devices.empty() || flags.device >= 0)
    return absl::InvalidArgumentError("--devices and --device name CUDA devices; a CPU worker takes --cpu-devices N");
  if (flags.cpu_devices < 0 || flags.cpu_devices > kMaxCpuDevices)
    return absl::InvalidArgumentError(
        absl::StrCat("--cpu-devices: expected 0 (the host as one device) to ", kMaxCpuDevices, ", got ", flags.cpu_devices));
  if (flags.cpu_devices == 0) return std::vector<SelectedDevice>{{.ordinal = 0, .cpu_device = -1}};
  std::vector<SelectedDevice> out;
  for (int i = 0; i < flags.cpu_devices; ++i) out.push_back({.ordinal = 0, .cpu_device = i});
  return out;
}

}  // namespace

absl::StatusOr<std::vector<SelectedDevice>> SelectDevices(const DeviceSelectionFlags& flags) {
  if (flags.kind == "cpu") return SelectCpu(flags);
  if (flags.kind != "cuda")
    return absl::InvalidArgumentError(absl::StrCat("unknown device kind '", flags.kind, "' (known: cpu, cuda)"));
  if (flags.cpu_devices != 0) return absl::InvalidArgumentError("--cpu-devices is for the CPU backend only");
  if (!flags.devices.empty() && flags.device >= 0)
    return absl::InvalidArgumentError("give --devices or --device, not both");
  if (flags.device < -1) return absl::InvalidArgumentError(absl::StrCat("--device: expected >= 0, got ", flags.device));
  if (flags.visible_gpus <= 0) return absl::FailedPreconditionError("no CUDA device is visible to this process");
  std::vector<SelectedDevice> out;
  if (flags.device >= 0) {
    if (flags.device >= flags.visible_gpus)
      return absl::InvalidArgumentError(
          absl::StrCat("--device: no GPU ", flags.device, "; this host shows ", flags.visible_gpus));
    out.push_back({.ordinal = flags.device});
    return out;
  }
  if (flags.devices.empty() || flags.devices == "all") {
    for (int i = 0; i < flags.visible_gpus; ++i) out.push_back({.ordinal = i});
    return out;
  }
  std::set<int> seen;
  for (absl::string_view item : absl::StrSplit(flags.devices, ',')) {
    item = absl::StripAsciiWhitespace(item);
    int ordinal = -1;
    if (!absl::SimpleAtoi(item, &ordinal) || ordinal < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("--devices: expected all or a comma list of GPU ordinals (0,1), got '", flags.devices, "'"));
    if (ordinal >= flags.visible_gpus)
      return absl::InvalidArgumentError(
          absl::StrCat("--devices: no GPU ", ordinal, "; this host shows ", flags.visible_gpus));
    if (!seen.insert(ordinal).second)
      return absl::InvalidArgumentError(absl::StrCat("--devices: GPU ", ordinal, " is listed twice"));
    out.push_back({.ordinal = ordinal});
  }
  return out;
}

std::string CalibrationCachePathFor(const std::string& path, int count, const std::string& device_uuid) {
  if (path.empty() || count <= 1) return path;
  return absl::StrCat(path, ".", device_uuid);
}

}  // namespace kbench::worker
