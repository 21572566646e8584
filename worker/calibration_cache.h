// The per-device calibration cache: a Calibration message in protobuf text format, one file per
// device, so a worker restart skips the seconds of measuring. A quick (test) calibration is marked
// in its method and is never taken for a full one.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/device.pb.h"
#include "worker/backend.h"

namespace kbench::worker {

// Prefix of Calibration.method for a quick calibration.
inline constexpr char kQuickCalibrationPrefix[] = "quick;";

struct CalibrationCacheOptions {
  std::string path;          // Empty: DefaultCalibrationCachePath(device uuid).
  bool recalibrate = false;  // Measure even when the cache holds an entry; then overwrite it.
  bool quick = false;        // This worker calibrates quickly: it accepts a quick cached entry too.
};

// $XDG_CACHE_HOME/kbench/calibration-<uuid>.txt, else ~/.cache/kbench/...; "" without a home.
std::string DefaultCalibrationCachePath(absl::string_view device_uuid);

absl::StatusOr<v1::Calibration> LoadCalibration(const std::string& path);
// Creates the directory; writes a temporary file and renames it, so readers never see half a file.
absl::Status SaveCalibration(const std::string& path, const v1::Calibration& calibration);

struct CalibrationOutcome {
  v1::Calibration calibration;
  bool from_cache = false;
  std::string path;           // The cache file used; "" when none.
  absl::Status save_status;   // Why the cache could not be written, if it could not (not fatal).
};

// Takes the cached calibration of backend.device() when it is usable, else backend.Calibrate() and
// saves it. Either way the backend's calibration is set. Errors only when measuring fails.
absl::StatusOr<CalibrationOutcome> LoadOrCalibrate(Backend& backend, const CalibrationCacheOptions& options);

}  // namespace kbench::worker
