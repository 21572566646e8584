// The calibration's ceilings per traffic mix and per compute unit, with the worker's own kernels
// (stream_kernels.cuh): read-only, write-only, 1:1 and 2:1 streams over a working set of at least
// 4x the L2, an L2-resident read, and the f32 FMA and SFU exp2 peaks.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "absl/status/status.h"
#include "kbench/v1/device.pb.h"

namespace kbench::worker {

// Fills the stream, L2, FMA and SFU fields of `cal` and appends how to `method`. quick: smaller
// buffers (still at least 4x the L2) and fewer repetitions.
absl::Status MeasureStreams(cudaStream_t stream, const v1::DeviceInfo& device, bool quick, v1::Calibration* cal,
                            std::string* method);

}  // namespace kbench::worker
