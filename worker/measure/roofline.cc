#include "worker/measure/roofline.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/names.h"
#include "worker/calibration_check.h"
#include "worker/measure/ceilings.h"

namespace kbench::worker {

double PeakFor(const google::protobuf::Map<std::string, double>& peaks, v1::Dtype dtype) {
  if (auto it = peaks.find(api::DtypeName(dtype)); it != peaks.end()) return it->second;
  if (auto it = peaks.find("f32"); it != peaks.end()) return it->second;
  return 0;
}

v1::RooflineCeiling MakeCeiling(const std::string& source, double bandwidth, double peak, const kernels::Cost& cost,
                                double median_ns) {
  v1::RooflineCeiling c;
  c.set_source(source);
  c.set_bandwidth_bytes_per_second(bandwidth);
  c.set_peak_flops_per_second(peak);
  if (bandwidth > 0) c.set_ridge_flops_per_byte(peak / bandwidth);
  const double memory_s = bandwidth > 0 ? cost.bytes() / bandwidth : 0;
  const double compute_s = peak > 0 ? cost.flops / peak : 0;
  c.set_floor_ns(std::max(memory_s, compute_s) * 1e9);
  if (median_ns > 0) {
    const double seconds = median_ns * 1e-9;
    c.set_utilization(c.floor_ns() / median_ns);
    if (bandwidth > 0) c.set_bandwidth_fraction(cost.bytes() / seconds / bandwidth);
    if (peak > 0) c.set_flops_fraction(cost.flops / seconds / peak);
  }
  return c;
}

std::string CeilingWarning(const v1::RooflineCeiling& c, const v1::Calibration& calibration) {
  std::string warning;
  const double allowance =
      std::max({calibration.copy_spread_fraction(), calibration.stream_spread_fraction(), kMinSpreadAllowance});
  const double over = std::max({c.utilization(), c.bandwidth_fraction(), c.flops_fraction()});
  if (over > 1 + allowance)
    warning = absl::StrFormat(
        "%.1f%% of the calibrated %s, beyond the calibration's spread (%.1f%%): the ceiling was measured low "
        "(a busy device, or a stale cache: kbench-worker --recalibrate) or does not bound this op",
        100 * over,
        c.bandwidth_fraction() >= c.flops_fraction() ? absl::StrCat("bandwidth (", c.bandwidth_ceiling(), ")")
                                                     : absl::StrCat("peak (", c.peak_ceiling(), ")"),
        100 * allowance);
  if (!calibration.warning().empty())
    absl::StrAppend(&warning, warning.empty() ? "" : "; ", "calibration suspect: ", calibration.warning());
  return warning;
}

v1::Roofline ComputeRoofline(const kernels::Cost& cost, double median_ns, v1::Dtype dtype,
                             const std::optional<v1::Calibration>& calibration,
                             const std::optional<v1::DatasheetPeaks>& datasheet,
                             const RooflineContext& context) {
  v1::Roofline r;
  r.set_bytes(cost.bytes());
  r.set_bytes_read(cost.bytes_read);
  r.set_bytes_written(cost.bytes_written);
  r.set_flops(cost.flops);
  if (cost.bytes() > 0) r.set_arithmetic_intensity(cost.flops / cost.bytes());
  if (median_ns > 0) {
    r.set_achieved_bytes_per_second(cost.bytes() / (median_ns * 1e-9));
    r.set_achieved_flops_per_second(cost.flops / (median_ns * 1e-9));
  }
  if (calibration) {
    const bool in_l2 = JudgedInL2(context.cache_mode, context.working_set_bytes, context.l2_bytes, *calibration);
    const Choice bandwidth = in_l2 ? Choice{calibration->l2_read_bytes_per_second(), "L2 read (HOT, working set in L2)"}
                                   : BandwidthForMix(*calibration, ReadShare(cost));
    const Choice peak_choice = PeakForUnit(*calibration, cost.unit, dtype);
    r.set_l2_resident(in_l2);
    const double bw = bandwidth.rate, peak = peak_choice.rate;
    v1::RooflineCeiling& c = *r.add_ceilings() = MakeCeiling("calibrated", bw, peak, cost, median_ns);
    c.set_bandwidth_ceiling(bandwidth.name);
    c.set_peak_ceiling(peak_choice.name);
    if (median_ns > 0) {
      const double memory_s = bw > 0 ? cost.bytes() / bw : 0;
      const double compute_s = peak > 0 ? cost.flops / peak : 0;
      if (c.bandwidth_fraction() < kLatencyBoundFraction && c.flops_fraction() < kLatencyBoundFraction)
        r.set_bound_class(v1::LATENCY_BOUND);
      else
        r.set_bound_class(memory_s >= compute_s ? v1::MEMORY_BOUND : v1::COMPUTE_BOUND);
    }
    r.set_warning(CeilingWarning(c, *calibration));
  }
  if (datasheet) {
    v1::RooflineCeiling& d = *r.add_ceilings() = MakeCeiling(
        "datasheet", datasheet->memory_bytes_per_second(), PeakFor(datasheet->peak_flops_per_second(), dtype), cost,
        median_ns);
    d.set_bandwidth_ceiling("datasheet DRAM");
    d.set_peak_ceiling(absl::StrCat("datasheet ", api::DtypeName(dtype)));
  }
  return r;
}

}  // namespace kbench::worker
