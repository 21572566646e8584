// Ceilings of the host for the CPU backend: a STREAM-like parallel copy (bytes read + written), the
// read-only, write-only and 2:1 streams, and an FMA loop over every hardware thread. Both report the best repetition: a ceiling is the most the
// machine can do, and noise only ever makes a repetition slower.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "kbench/v1/device.pb.h"

namespace kbench::worker {

struct CpuCalibrationOptions {
  int threads = 1;
  int64_t llc_bytes = 0;
  // For tests: fewer repetitions and iterations, and copy buffers of 4 x LLC within [32, 256] MiB.
  bool quick = false;
};

struct CopyMeasurement {
  double bytes_per_second = 0;  // 2 * buffer_bytes / best time
  int64_t buffer_bytes = 0;     // Each of source and destination.
  int reps = 0;
  double spread_fraction = 0;   // (slowest - fastest) / median repetition
};
// Copies buffer_bytes from one buffer into another, split over `threads`, `reps` times.
CopyMeasurement MeasureCopy(int threads, int64_t buffer_bytes, int reps);

struct StreamMeasurement {
  double read_bytes_per_second = 0;
  double write_bytes_per_second = 0;
  double read2_write1_bytes_per_second = 0;  // c = a + b: 2 reads, 1 write
  int64_t buffer_bytes = 0;                  // Each of the three buffers.
  int reps = 0;
  double spread_fraction = 0;                // The widest of the three streams'.
};
// Streams of f32 over buffer_bytes, split over `threads`, `reps` times each: the best of each.
StreamMeasurement MeasureStreams(int threads, int64_t buffer_bytes, int reps);

struct FmaMeasurement {
  double flops_per_second = 0;  // 2 FLOPs per FMA lane
  std::string isa;              // "avx512f", "avx2+fma" or "generic"
  int lanes = 0, chains = 0;
  int reps = 0;
};
// Independent float FMA chains in vector registers, `iterations` per thread, `reps` times.
FmaMeasurement MeasureFma(int threads, int64_t iterations, int reps);

// The share of the host's cores that other processes kept busy while `measure` ran: the busy time
// of every core (/proc/stat) less this process's own CPU time, over cores x wall time. 0 when
// /proc/stat cannot be read.
double OtherLoadDuring(const std::function<void()>& measure);

// Both measurements; the FMA peak is stored for "f32" and for "bf16" (CPU bf16 math runs in f32).
// The source and destination buffers are each max(4 x LLC, 128 MiB): 256 MiB at least in all.
absl::StatusOr<v1::Calibration> CalibrateCpu(const CpuCalibrationOptions& options, const std::string& device_uuid);

}  // namespace kbench::worker
