// Fleet health, pure: a device is unhealthy when its calibrated copy bandwidth, or its f32 or bf16
// peak, lies more than a margin below the median of the fleet's devices of the same model. A slow
// GPU (bad cooling, a degraded link, clocks stuck low) shows up here before it skews results.
#pragma once

#include <string>
#include <vector>

#include "kbench/v1/worker.pb.h"

namespace kbench::server {

struct HealthInput {
  const v1::WorkerInfo* info = nullptr;
  bool counts_for_median = true;  // False for workers whose numbers should not set the norm (lost ones).
};

struct WorkerHealth {
  bool unhealthy = false;
  std::string reason;                  // Every failing device and ceiling, "; "-separated; empty when healthy.
  std::vector<bool> device_unhealthy;  // Per device of the worker, in order.
};

// The calibrated ceilings of a device that health compares.
struct DeviceCeilings {
  std::string gpu_model;  // Device name.
  double copy_bytes_per_second = 0;
  double f32_flops_per_second = 0;
  double bf16_flops_per_second = 0;
};

// The device's calibration: the one naming its uuid, else the one at its position (calibrations
// come one per device, in order); null when there is none.
const v1::Calibration* CalibrationOf(const v1::WorkerInfo& info, int device_index);

// The ceilings of a device from its calibration (zeros when it has none).
DeviceCeilings CeilingsOf(const v1::WorkerInfo& info, int device_index);

// One verdict per input, in order. A ceiling that is missing (0) is not judged; the median of a
// model is over the devices of counting workers that have that ceiling.
std::vector<WorkerHealth> AssessFleetHealth(const std::vector<HealthInput>& workers, double margin);

}  // namespace kbench::server
