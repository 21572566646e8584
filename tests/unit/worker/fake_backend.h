// A Backend that measures nothing: it records what it was asked to run and answers OK, so the job
// runner and the calibration cache are tested without timing anything.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "worker/backend.h"
#include "worker/runner/convert.h"

namespace kbench::worker::testing {

class FakeBackend : public Backend {
 public:
  kernels::Backend kind() const override { return kernels::Backend::kCpu; }
  v1::DeviceInfo device() const override {
    v1::DeviceInfo d;
    d.set_backend(v1::BACKEND_CPU);
    d.set_name("Fake CPU");
    d.set_uuid("cpu-fake");
    d.set_memory_bytes(memory_bytes);
    return d;
  }
  absl::StatusOr<v1::Calibration> Calibrate() override {
    ++calibrations;
    v1::Calibration c;
    c.set_device_uuid("cpu-fake");
    c.set_copy_bytes_per_second(1e10);
    (*c.mutable_peak_flops_per_second())["f32"] = 1e11;
    c.set_method("fake");
    if (tweak_calibration) tweak_calibration(c, calibrations);
    return c;
  }
  std::optional<v1::DatasheetPeaks> datasheet() const override { return std::nullopt; }
  v1::Result MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem,
                        const v1::MeasurementSettings& settings, const CancelFlag&) override {
    measured.push_back(variant.name + " " + problem.label());
    last_settings = settings;
    if (on_measure) on_measure(measured.size());
    v1::Result r;
    r.set_op(op.name);
    r.set_variant(variant.name);
    *r.mutable_problem() = ToProtoProblem(problem);
    r.set_status(v1::OK);
    return r;
  }

  int64_t memory_bytes = int64_t{1} << 30;
  int calibrations = 0;
  std::function<void(v1::Calibration&, int attempt)> tweak_calibration;  // attempt counts from 1
  std::vector<std::string> measured;  // "variant 64 f32", in call order
  v1::MeasurementSettings last_settings;
  std::function<void(size_t count)> on_measure;
};

}  // namespace kbench::worker::testing
