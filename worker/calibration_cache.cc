#include "worker/calibration_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/quote.h"
#include "google/protobuf/text_format.h"
#include "worker/calibration_check.h"

namespace kbench::worker {

std::string DefaultCalibrationCachePath(absl::string_view device_uuid) {
  std::string dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') dir = xdg;
  else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') dir = absl::StrCat(home, "/.cache");
  else return "";
  return absl::StrCat(dir, "/kbench/calibration-", device_uuid, ".txt");
}

std::string CalibrationKey(const v1::DeviceInfo& d) {
  return absl::StrCat(d.uuid(), "|driver ", d.driver_version(), " ", d.driver_release(), "|runtime ",
                      d.runtime_version(), "|max clocks ", d.clock_khz(), "/", d.memory_clock_khz(),
                      " kHz|application clocks ", d.application_sm_clock_mhz(), "/",
                      d.application_memory_clock_mhz(), " MHz");
}

std::string StaleReason(const v1::Calibration& cached, const v1::DeviceInfo& device, int64_t now_unix_ms,
                        std::chrono::milliseconds max_age) {
  if (cached.device_uuid() != device.uuid())
    return absl::StrCat("measured on another device (", api::Quote(cached.device_uuid()), ")");
  if (const std::string key = CalibrationKey(device); cached.cache_key() != key)
    return absl::StrCat("measured under another driver or clocks (", api::Quote(cached.cache_key()), ", now ",
                        api::Quote(key), ")");
  const int64_t age_ms = now_unix_ms - cached.measured_at_unix_ms();
  if (age_ms < 0) return "dated in the future";
  if (age_ms > max_age.count())
    return absl::StrCat("expired: ", age_ms / 3'600'000, " h old, more than the ", max_age.count() / 3'600'000, " h limit");
  return "";
}

absl::StatusOr<v1::Calibration> LoadCalibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no calibration cache at ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  v1::Calibration c;
  if (!google::protobuf::TextFormat::ParseFromString(ss.str(), &c))
    return absl::DataLossError(absl::StrCat("unreadable calibration cache ", path));
  return c;
}

absl::Status SaveCalibration(const std::string& path, const v1::Calibration& calibration) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(calibration, &text))
    return absl::InternalError("could not print the calibration");
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", p.parent_path().string(), ": ", ec.message()));
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<CalibrationOutcome> LoadOrCalibrate(Backend& backend, const CalibrationCacheOptions& options) {
  CalibrationOutcome out;
  const std::string uuid = backend.device().uuid();
  const std::optional<v1::DatasheetPeaks> datasheet = backend.datasheet();
  out.path = options.path.empty() ? DefaultCalibrationCachePath(uuid) : options.path;
  const v1::DeviceInfo device = backend.device();
  const int64_t now_ms = options.now_unix_ms != 0 ? options.now_unix_ms
                                                  : std::chrono::duration_cast<std::chrono::milliseconds>(
                                                        std::chrono::system_clock::now().time_since_epoch())
                                                        .count();
  if (!options.recalibrate && !out.path.empty()) {
    absl::StatusOr<v1::Calibration> cached = LoadCalibration(out.path);
    std::string stale = cached.ok() ? StaleReason(*cached, device, now_ms, options.max_age) : "";
    if (!stale.empty()) out.refusals.push_back(absl::StrCat("cached ", out.path, ": ", stale));
    if (cached.ok() && stale.empty() && cached->copy_bytes_per_second() > 0 &&
        (options.quick || !absl::StartsWith(cached->method(), kQuickCalibrationPrefix))) {
      if (absl::Status check = options.check ? CheckCalibration(*cached, datasheet) : absl::OkStatus(); check.ok()) {
        out.calibration = *cached;
        out.from_cache = true;
        backend.set_calibration(out.calibration);
        return out;
      } else {
        out.refusals.push_back(absl::StrCat("cached ", out.path, ": ", check.message()));
      }
    }
  }
  std::optional<v1::Calibration> best;
  absl::Status last_check;
  for (int attempt = 1; attempt <= std::max(1, options.max_attempts); ++attempt) {
    if (attempt > 1 && options.retry_delay.count() > 0) std::this_thread::sleep_for(options.retry_delay);
    absl::StatusOr<v1::Calibration> measured = backend.Calibrate();
    if (!measured.ok()) return measured.status();
    measured->set_cache_key(CalibrationKey(device));
    if (measured->measured_at_unix_ms() == 0) measured->set_measured_at_unix_ms(now_ms);
    last_check = options.check ? CheckCalibration(*measured, datasheet) : absl::OkStatus();
    if (last_check.ok()) {
      best = *std::move(measured);
      break;
    }
    out.refusals.push_back(absl::StrCat("attempt ", attempt, ": ", last_check.message()));
    if (!best || measured->copy_bytes_per_second() > best->copy_bytes_per_second()) best = *std::move(measured);
  }
  out.calibration = *std::move(best);
  if (!last_check.ok()) {
    // Never cached: the next start measures again, and every result until then says so.
    out.calibration.set_warning(absl::StrCat("every calibration attempt failed its checks (", out.refusals.size(),
                                             "; last: ", last_check.message(), ")"));
    backend.set_calibration(out.calibration);
    return out;
  }
  backend.set_calibration(out.calibration);
  if (!out.path.empty()) out.save_status = SaveCalibration(out.path, out.calibration);
  return out;
}

}  // namespace kbench::worker
