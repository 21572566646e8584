#include "worker/cpu/cpu_backend.h"

#include <exception>
#include <functional>
#include <memory>

#include "absl/strings/str_cat.h"
#include "worker/cpu/cpu_calibration.h"
#include "worker/measure/common.h"
#include "worker/measure/harness.h"
#include "worker/measure/pipeline.h"

namespace kbench::worker {
namespace {

void SetStatus(v1::Result* r, v1::ResultStatus status, std::string message) {
  r->set_status(status);
  r->set_status_message(std::move(message));
}

// The host as the pipeline's device: tensors are the host ones the check fills, a sample is the
// steady clock around back-to-back calls, a flush writes a buffer twice the LLC.
class CpuRun final : public DeviceRun {
 public:
  CpuRun(const kernels::Variant& variant, const kernels::Problem& problem, const HostTensors& tensors,
         std::function<void()> flush)
      : variant_(variant), problem_(problem), tensors_(tensors), flush_(std::move(flush)) {}

  absl::Status RunOnHost(std::span<const kernels::Tensor> t) override {
    variant_.run_cpu(problem_, t);
    return absl::OkStatus();
  }
  // The host's write-back is not measured: a COLD sample ends with the calls (worker/README.md).
  absl::StatusOr<SampleTime> Sample(int launches, bool) override {
    const int64_t start = SteadyNowNs();
    for (int i = 0; i < launches; ++i) variant_.run_cpu(problem_, tensors_.all());
    return SampleTime{.ns = static_cast<double>(SteadyNowNs() - start)};
  }
  void Flush() override { flush_(); }
  std::string FailureMessage(const absl::Status& s, v1::ResultStatus status) const override {
    return status == v1::RUNTIME_ERROR ? s.ToString() : std::string(s.message());
  }

 private:
  const kernels::Variant& variant_;
  const kernels::Problem& problem_;
  const HostTensors& tensors_;
  std::function<void()> flush_;
};

class CpuDevice final : public MeasureDevice {
 public:
  CpuDevice(const v1::DeviceInfo& device, std::function<void()> flush) : device_(device), flush_(std::move(flush)) {}

  std::string SkipReason(const kernels::OpDef& op, const kernels::Variant&, const kernels::Problem& problem) override {
    if (const int64_t bytes = TensorBytes(op, problem); bytes > device_.memory_bytes() / 2)
      return absl::StrCat("needs ", bytes, " bytes of host memory, more than half of the ", device_.memory_bytes(),
                          " this host has");
    return "";
  }
  absl::StatusOr<std::unique_ptr<DeviceRun>> Allocate(const kernels::OpDef&, const kernels::Variant& variant,
                                                      const kernels::Problem& problem,
                                                      const HostTensors& host) override {
    return std::make_unique<CpuRun>(variant, problem, host, flush_);
  }

 private:
  const v1::DeviceInfo& device_;
  std::function<void()> flush_;
};

}  // namespace

CpuBackend::CpuBackend(CpuBackendOptions options) : CpuBackend(options, ReadCpuHostInfo()) {}

CpuBackend::CpuBackend(CpuBackendOptions options, CpuHostInfo host)
    : options_(options), host_(std::move(host)), device_(MakeCpuDeviceInfo(host_, options.device_index)) {}

absl::StatusOr<v1::Calibration> CpuBackend::Calibrate() {
  return CalibrateCpu({.threads = host_.threads, .llc_bytes = host_.llc_bytes, .quick = options_.quick_calibration},
                      device_.uuid());
}

v1::Result CpuBackend::MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant,
                                  const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                  const CancelFlag& cancel) {
  v1::Result r = NewResult(*this, op, variant, problem);
  // The flusher (2 x LLC) is made on the first COLD measurement.
  CpuDevice cpu(device_, [this] {
    if (!flusher_) flusher_ = std::make_unique<CacheFlusher>(2 * host_.llc_bytes, host_.threads);
    flusher_->Flush();
  });
  try {
    MeasureInto(*this, cpu, op, variant, problem, settings, cancel, &r);
  } catch (const std::exception& e) {
    r.clear_timing();
    r.clear_roofline();
    SetStatus(&r, v1::RUNTIME_ERROR, absl::StrCat("exception: ", e.what()));
  } catch (...) {
    r.clear_timing();
    r.clear_roofline();
    SetStatus(&r, v1::RUNTIME_ERROR, "exception of unknown type");
  }
  return r;
}

}  // namespace kbench::worker
