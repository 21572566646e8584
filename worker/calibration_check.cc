#include "worker/calibration_check.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"

namespace kbench::worker {

double SpreadFraction(std::vector<double> times) {
  if (times.size() < 2) return 0;
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  return median > 0 ? (times.back() - times.front()) / median : 0;
}

absl::Status CheckCalibration(const v1::Calibration& cal, const std::optional<v1::DatasheetPeaks>& datasheet) {
  if (!(cal.copy_bytes_per_second() > 0)) return absl::FailedPreconditionError("no copy bandwidth was measured");
  if (cal.other_load_fraction() > kMaxOtherLoad)
    return absl::FailedPreconditionError(absl::StrFormat(
        "device busy: %.0f%% of it was used by other work while calibrating (at most %.0f%%)",
        100 * cal.other_load_fraction(), 100 * kMaxOtherLoad));
  if (cal.copy_spread_fraction() > kMaxCopySpread)
    return absl::FailedPreconditionError(absl::StrFormat(
        "device busy or unstable: the copy rounds spread %.1f%% (at most %.0f%%)", 100 * cal.copy_spread_fraction(),
        100 * kMaxCopySpread));
  if (cal.stream_spread_fraction() > kMaxCopySpread)
    return absl::FailedPreconditionError(absl::StrFormat(
        "device busy or unstable: the stream rounds spread %.1f%% (at most %.0f%%)",
        100 * cal.stream_spread_fraction(), 100 * kMaxCopySpread));
  if (!datasheet) return absl::OkStatus();
  const double ds_bw = datasheet->memory_bytes_per_second();
  if (ds_bw > 0) {
    const double ratio = cal.copy_bytes_per_second() / ds_bw;
    if (ratio > kMaxOverDatasheet)
      return absl::FailedPreconditionError(absl::StrFormat(
          "implausible: copy %.0f GB/s is %.0f%% of the %s datasheet's %.0f GB/s", cal.copy_bytes_per_second() / 1e9,
          100 * ratio, datasheet->model(), ds_bw / 1e9));
    if (ratio < kMinCopyOfDatasheet)
      return absl::FailedPreconditionError(absl::StrFormat(
          "device busy or throttled: copy %.0f GB/s is only %.0f%% of the %s datasheet's %.0f GB/s",
          cal.copy_bytes_per_second() / 1e9, 100 * ratio, datasheet->model(), ds_bw / 1e9));
  }
  // A stream beyond the datasheet's DRAM bandwidth was served by a cache: its working set was too small.
  if (ds_bw > 0)
    for (auto [name, bw] : {std::pair{"read-only", cal.read_bytes_per_second()},
                            {"write-only", cal.write_bytes_per_second()},
                            {"1:1", cal.read_write_bytes_per_second()},
                            {"2:1", cal.read2_write1_bytes_per_second()}})
      if (bw / ds_bw > kMaxOverDatasheet)
        return absl::FailedPreconditionError(absl::StrFormat(
            "implausible: the %s stream's %.0f GB/s is %.0f%% of the %s datasheet's %.0f GB/s", name, bw / 1e9,
            100 * bw / ds_bw, datasheet->model(), ds_bw / 1e9));
  for (const auto& [dtype, peak] : cal.peak_flops_per_second()) {
    const auto it = datasheet->peak_flops_per_second().find(dtype);
    if (it == datasheet->peak_flops_per_second().end() || it->second <= 0) continue;
    if (peak / it->second > kMaxOverDatasheet)
      return absl::FailedPreconditionError(absl::StrFormat(
          "implausible: %s peak %.1f TFLOP/s is %.0f%% of the %s datasheet's %.1f TFLOP/s", dtype, peak / 1e12,
          100 * peak / it->second, datasheet->model(), it->second / 1e12));
  }
  return absl::OkStatus();
}

}  // namespace kbench::worker
