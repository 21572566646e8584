// The per-device calibration cache: a Calibration message in protobuf text format, one file per
// device, so a worker restart skips the seconds of measuring. An entry holds for the device, driver
// and clocks it was measured under (its cache_key) and for kCalibrationMaxAge: a driver upgrade,
// other application clocks or an old entry is measured again. A quick (test) calibration is marked
// in its method and is never taken for a full one.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/device.pb.h"
#include "worker/backend.h"

namespace kbench::worker {

// Prefix of Calibration.method for a quick calibration.
inline constexpr char kQuickCalibrationPrefix[] = "quick;";

// How long a cached calibration is taken: ceilings drift (firmware, cooling, a reseated card).
inline constexpr std::chrono::hours kCalibrationMaxAge{24 * 7};

// The device, driver and clocks a calibration holds for: uuid, driver and runtime versions, driver
// release, max SM and memory clocks, application clocks (DeviceInfo fields; unknown ones as 0 / "").
std::string CalibrationKey(const v1::DeviceInfo& device);

// Why a cached calibration cannot be taken for `device` now ("" when it can): another device, key
// or an entry older than max_age (or dated in the future) at now_unix_ms.
std::string StaleReason(const v1::Calibration& cached, const v1::DeviceInfo& device, int64_t now_unix_ms,
                        std::chrono::milliseconds max_age);

struct CalibrationCacheOptions {
  std::string path;          // Empty: DefaultCalibrationCachePath(device uuid).
  bool recalibrate = false;  // Measure even when the cache holds an entry; then overwrite it.
  bool quick = false;        // This worker calibrates quickly: it accepts a quick cached entry too.
  // A calibration that fails CheckCalibration (busy device, beyond the datasheet) is measured again,
  // up to this many times in all, `retry_delay` apart; a cached one that fails is not taken.
  // Off: the first measurement is taken as it is (for tests of the cache itself on a loaded host).
  bool check = true;
  int max_attempts = 3;
  std::chrono::milliseconds retry_delay{5000};
  std::chrono::milliseconds max_age = kCalibrationMaxAge;
  int64_t now_unix_ms = 0;  // 0: the system clock (tests set it).
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
  std::vector<std::string> refusals;  // Each refused calibration (cached or measured) and why, for the log.
};

// Takes the cached calibration of backend.device() when it is usable (StaleReason) and plausible, else measures
// with backend.Calibrate() until an attempt passes CheckCalibration, and saves that one. When every
// attempt fails, the best (highest copy bandwidth) is used with its `warning` set, and not saved.
// A measured calibration gets the device's CalibrationKey.
// Either way the backend's calibration is set. Errors only when measuring fails.
absl::StatusOr<CalibrationOutcome> LoadOrCalibrate(Backend& backend, const CalibrationCacheOptions& options);

}  // namespace kbench::worker
