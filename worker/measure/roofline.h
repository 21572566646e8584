// The roofline block of a result: the cost model's bytes and FLOPs against the device's ceilings,
// the calibrated one chosen for the op's traffic mix and compute unit (ceilings.h).
#pragma once

#include <optional>
#include <string>

#include "core/op.h"
#include "kbench/v1/common.pb.h"
#include "kbench/v1/device.pb.h"
#include "kbench/v1/result.pb.h"

namespace kbench::worker {

// Both achieved fractions under this (of the compute and the memory ceiling): latency-bound.
inline constexpr double kLatencyBoundFraction = 0.45;

// Peak FLOP/s of a dtype in a per-dtype map ("f32", "bf16", ...): the dtype's own entry, else the
// f32 entry (a device without native math for the dtype runs it on its f32 units), else 0.
double PeakFor(const google::protobuf::Map<std::string, double>& peaks, v1::Dtype dtype);

// One ceiling's numbers. A zero bandwidth or peak leaves its term out of the floor.
v1::RooflineCeiling MakeCeiling(const std::string& source, double bandwidth_bytes_per_second,
                                double peak_flops_per_second, const kernels::Cost& cost, double median_ns);

// Why a calibrated ceiling's numbers cannot be taken at face value, or "": a fraction above
// 1 + max(calibration spread, kMinSpreadAllowance), or a calibration that failed its checks.
std::string CeilingWarning(const v1::RooflineCeiling& calibrated, const v1::Calibration& calibration);

// Where the result was measured, for the choice of ceiling: a HOT working set that fits in the L2
// is held against the L2 read ceiling.
struct RooflineContext {
  v1::CacheMode cache_mode = v1::COLD;
  double working_set_bytes = 0;  // All the op's tensors.
  int64_t l2_bytes = 0;          // The device's L2 (last-level cache).
};

// Intensity, achieved throughput, the calibrated ceiling (bandwidth of the op's read share, peak of
// its compute unit, both named; the L2 read bandwidth when JudgedInL2) then the datasheet one when
// given, and
// the bound class and the warning from the calibrated ceiling (UNSPECIFIED without calibration or timing):
// LATENCY_BOUND when both fractions < kLatencyBoundFraction, else MEMORY_BOUND when the memory
// term of the floor is at least the compute term, else COMPUTE_BOUND.
v1::Roofline ComputeRoofline(const kernels::Cost& cost, double median_ns, v1::Dtype dtype,
                             const std::optional<v1::Calibration>& calibration,
                             const std::optional<v1::DatasheetPeaks>& datasheet,
                             const RooflineContext& context = {});

}  // namespace kbench::worker
