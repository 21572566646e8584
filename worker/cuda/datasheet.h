// Datasheet peaks (dense, no sparsity) for the GPU models the fleet runs, keyed by the device name
// the driver reports and its SM count. An unknown device has none: calibrated values stand alone.
#pragma once

#include <optional>
#include <string>

#include "kbench/v1/device.pb.h"

namespace kbench::worker {

std::optional<v1::DatasheetPeaks> LookupDatasheet(const std::string& device_name, int sm_count, int64_t memory_bytes);

}  // namespace kbench::worker
