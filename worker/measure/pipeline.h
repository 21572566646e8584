// The one measuring pipeline every backend runs (the CPU one, the CUDA one, and through it custom
// kernels): skip -> allocate -> check -> time -> check again (a launch and, HOT, the timed graph
// replayed once) -> roofline. The sequence and its policy are written here once; the backend
// supplies the device's mechanics through MeasureDevice (measure/device.h).
#pragma once

#include "core/op.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/backend.h"
#include "worker/cancel.h"
#include "worker/measure/device.h"

namespace kbench::worker {

// A result naming what is measured: op, variant, problem and the backend's device.
v1::Result NewResult(const Backend& backend, const kernels::OpDef& op, const kernels::Variant& variant,
                     const kernels::Problem& problem);

// Runs the pipeline for one variant on one problem into `r` (from NewResult): status (+ message),
// resources, correctness, timing and the roofline against the backend's calibration and datasheet.
// An exception of the variant's code passes through: the caller decides what it means.
void MeasureInto(const Backend& backend, MeasureDevice& device, const kernels::OpDef& op,
                 const kernels::Variant& variant, const kernels::Problem& problem,
                 const v1::MeasurementSettings& settings, const CancelFlag& cancel, v1::Result* r);

}  // namespace kbench::worker
