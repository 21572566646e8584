#include "worker/measure/ceilings.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/names.h"
#include "worker/measure/roofline.h"

namespace kbench::worker {

std::vector<MixPoint> MixPoints(const v1::Calibration& c) {
  std::vector<MixPoint> points;
  auto add = [&](double share, double bw, std::string name) {
    if (bw > 0) points.push_back({share, bw, std::move(name)});
  };
  add(0, c.write_bytes_per_second(), "write-only");
  // A copy is 1:1 whoever's kernel runs it: the faster one is the ceiling.
  if (c.read_write_bytes_per_second() >= c.copy_bytes_per_second())
    add(0.5, c.read_write_bytes_per_second(), "1:1");
  else
    add(0.5, c.copy_bytes_per_second(), "copy");
  add(2.0 / 3.0, c.read2_write1_bytes_per_second(), "2:1");
  add(1, c.read_bytes_per_second(), "read-only");
  return points;
}

double ReadShare(const kernels::Cost& cost) {
  const double total = cost.bytes();
  return total > 0 ? std::clamp(cost.bytes_read / total, 0.0, 1.0) : 0.5;
}

Choice BandwidthForMix(const v1::Calibration& calibration, double read_share) {
  const std::vector<MixPoint> points = MixPoints(calibration);
  if (points.empty()) return {};
  for (const MixPoint& p : points)
    if (std::fabs(p.read_share - read_share) <= kMixSnap) return {p.bytes_per_second, p.name};
  if (read_share < points.front().read_share)
    return {points.front().bytes_per_second,
            absl::StrFormat("%s (nearest measured mix to read share %.2f)", points.front().name, read_share)};
  if (read_share > points.back().read_share)
    return {points.back().bytes_per_second,
            absl::StrFormat("%s (nearest measured mix to read share %.2f)", points.back().name, read_share)};
  for (size_t i = 1; i < points.size(); ++i) {
    const MixPoint &lo = points[i - 1], &hi = points[i];
    if (read_share > hi.read_share) continue;
    const double t = (read_share - lo.read_share) / (hi.read_share - lo.read_share);
    return {lo.bytes_per_second + t * (hi.bytes_per_second - lo.bytes_per_second),
            absl::StrFormat("%s .. %s at read share %.2f", lo.name, hi.name, read_share)};
  }
  return {points.back().bytes_per_second, points.back().name};  // not reached: the ranges cover it
}

Choice PeakForUnit(const v1::Calibration& calibration, kernels::ComputeUnit unit, v1::Dtype dtype) {
  const Choice gemm{PeakFor(calibration.peak_flops_per_second(), dtype),
                    absl::StrCat("GEMM ", api::DtypeName(dtype))};
  switch (unit) {
    case kernels::ComputeUnit::kTensorCore:
      return gemm;
    case kernels::ComputeUnit::kFp32Fma:
      if (calibration.fma_f32_flops_per_second() > 0) return {calibration.fma_f32_flops_per_second(), "f32 FMA"};
      break;
    case kernels::ComputeUnit::kSfu:
      if (calibration.sfu_ops_per_second() > 0) return {calibration.sfu_ops_per_second(), "SFU exp2"};
      break;
  }
  return {gemm.rate, absl::StrCat(gemm.name, " (the unit's own peak was not measured)")};
}

bool JudgedInL2(v1::CacheMode mode, double working_set_bytes, int64_t l2_bytes, const v1::Calibration& calibration) {
  return mode == v1::HOT && working_set_bytes > 0 && l2_bytes > 0 &&
         working_set_bytes <= static_cast<double>(l2_bytes) && calibration.l2_read_bytes_per_second() > 0;
}

}  // namespace kbench::worker
