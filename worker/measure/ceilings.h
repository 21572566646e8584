// Which calibrated ceilings a result is held against: the bandwidth of its op's traffic mix (read
// share between the measured write-only, 1:1, 2:1 and read-only streams, linearly interpolated) or
// the L2 read ceiling for a HOT working set that fits in the L2; and the peak of its op's compute
// unit (tensor core at the dtype, f32 FMA, SFU exp2). Each choice carries the name the Roofline
// block shows.
#pragma once

#include <string>
#include <vector>

#include "core/op.h"
#include "kbench/v1/common.pb.h"
#include "kbench/v1/device.pb.h"
#include "kbench/v1/job.pb.h"

namespace kbench::worker {

// A read share within this of a measured mix is that mix (reduce_sum's 4 written bytes do not
// make it "interpolated").
inline constexpr double kMixSnap = 0.005;

struct Choice {
  double rate = 0;   // bytes/s or FLOP/s; 0: no ceiling of that kind.
  std::string name;  // What it is, for RooflineCeiling.bandwidth_ceiling / peak_ceiling.
};

// A measured mix: its read share (reads / (reads + writes)) and bandwidth.
struct MixPoint {
  double read_share = 0;
  double bytes_per_second = 0;
  std::string name;
};

// The calibration's measured mixes by increasing read share, those measured only: write-only (0),
// 1:1 (1/2: the higher of the worker's own 1:1 stream and the D2D copy, named after it), 2:1 (2/3),
// read-only (1).
std::vector<MixPoint> MixPoints(const v1::Calibration& calibration);

// The bandwidth at `read_share` in [0, 1]: a measured mix within kMixSnap, else linear between its
// two neighbours, else (outside the measured range) the nearest one, named so.
Choice BandwidthForMix(const v1::Calibration& calibration, double read_share);

// Reads over all bytes of a cost; 0.5 (a copy) for a cost that moves nothing.
double ReadShare(const kernels::Cost& cost);

// The peak of a compute unit: kTensorCore the dtype's GEMM peak (PeakFor), kFp32Fma the f32 FMA
// peak, kSfu the exp2 rate. A unit the calibration did not measure falls back to the dtype's GEMM
// peak (an older calibration), named so.
Choice PeakForUnit(const v1::Calibration& calibration, kernels::ComputeUnit unit, v1::Dtype dtype);

// Whether a working set is judged against the L2 read ceiling: HOT, non-empty, at most the L2's
// size, and an L2 ceiling measured.
bool JudgedInL2(v1::CacheMode mode, double working_set_bytes, int64_t l2_bytes, const v1::Calibration& calibration);

}  // namespace kbench::worker
