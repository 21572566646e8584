// Which devices one kbench-worker measures on: one runner child per device, all of one kind.
// CUDA: --devices all|0,1,... or the one-GPU --device N (neither: every visible GPU). CPU: the host
// as one device, or --cpu-devices N test "devices" that share it (distinct uuids), so that the
// multi-device paths run without a GPU.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kbench::worker {

struct DeviceSelectionFlags {
  std::string kind;          // "cpu" or "cuda" (resolved: not "auto").
  std::string devices;       // --devices: "", "all" or a comma list of CUDA ordinals.
  int device = -1;           // --device: a CUDA ordinal; -1: not given.
  int cpu_devices = 0;       // --cpu-devices: 0: the host as one device.
  int visible_gpus = 0;      // CUDA devices this process sees.
};

struct SelectedDevice {
  int ordinal = 0;           // CUDA device ordinal (cuda).
  int cpu_device = -1;       // CPU test device index (cpu); -1: the host itself.
};

// INVALID_ARGUMENT naming the flag for a malformed list, an ordinal that is not visible, a repeat,
// flags that contradict each other or do not fit the kind; FAILED_PRECONDITION when cuda sees no GPU.
absl::StatusOr<std::vector<SelectedDevice>> SelectDevices(const DeviceSelectionFlags& flags);

// The calibration cache file of one of `count` devices: `path` itself for one device (or "" for the
// default per-uuid file); with several, "<path>.<uuid>" so that devices never share an entry.
std::string CalibrationCachePathFor(const std::string& path, int count, const std::string& device_uuid);

}  // namespace kbench::worker
