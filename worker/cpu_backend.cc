#include "worker/cpu_backend.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "worker/convert.h"
#include "worker/correctness.h"
#include "worker/cpu_calibration.h"
#include "worker/harness.h"
#include "worker/host_tensors.h"
#include "worker/measure_common.h"
#include "worker/roofline.h"

namespace kbench::worker {
namespace {

void SetStatus(v1::Result* r, v1::ResultStatus status, std::string message) {
  r->set_status(status);
  r->set_status_message(std::move(message));
}

// An interruption or failure of the check or the timing, as a result status.
void SetError(v1::Result* r, const absl::Status& s) {
  const v1::ResultStatus status = FailureStatus(s);
  SetStatus(r, status, status == v1::RUNTIME_ERROR ? s.ToString() : std::string(s.message()));
}

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
  v1::Result r;
  r.set_op(op.name);
  r.set_variant(variant.name);
  *r.mutable_problem() = ToProtoProblem(problem);
  *r.mutable_device() = device_;
  try {
    MeasureInto(op, variant, problem, settings, cancel, &r);
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

void CpuBackend::MeasureInto(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem,
                         const v1::MeasurementSettings& settings, const CancelFlag& cancel, v1::Result* r) {
  if (std::string why = SkipReason(variant, problem, kind()); !why.empty()) return SetStatus(r, v1::SKIPPED, why);
  if (const int64_t bytes = TensorBytes(op, problem); bytes > device_.memory_bytes() / 2)
    return SetStatus(r, v1::SKIPPED, absl::StrCat("needs ", bytes, " bytes of host memory, more than half of the ",
                                                  device_.memory_bytes(), " this host has"));

  const int64_t deadline = SteadyNowNs() + settings.timeout_ns();
  auto interrupted = [&]() -> absl::Status {
    if (cancel.cancelled()) return absl::CancelledError("cancelled");
    if (SteadyNowNs() >= deadline)
      return absl::DeadlineExceededError(absl::StrCat("timeout of ", settings.timeout_ns(), " ns reached"));
    return absl::OkStatus();
  };

  HostTensors tensors(op, problem);
  auto run = [&](std::span<const kernels::Tensor> t) {
    variant.run_cpu(problem, t);
    return absl::OkStatus();
  };
  absl::StatusOr<v1::Correctness> correctness = CheckCorrectness(op, problem, tensors, settings, run, interrupted);
  if (!correctness.ok()) return SetError(r, correctness.status());
  *r->mutable_correctness() = *correctness;
  if (!correctness->passed()) return SetStatus(r, v1::INCORRECT, DescribeFailure(*correctness));

  HarnessHooks hooks;
  hooks.sample = [&](int launches) -> absl::StatusOr<double> {
    const int64_t start = SteadyNowNs();
    for (int i = 0; i < launches; ++i) variant.run_cpu(problem, tensors.all());
    return static_cast<double>(SteadyNowNs() - start);
  };
  if (settings.cache_mode() != v1::HOT) {
    if (!flusher_) flusher_ = std::make_unique<CacheFlusher>(2 * host_.llc_bytes, host_.threads);
    hooks.flush = [this] { flusher_->Flush(); };
  }
  hooks.cancel = &cancel;
  hooks.deadline_ns = deadline;
  absl::StatusOr<v1::Timing> timing = worker::Measure(settings, hooks);
  if (!timing.ok()) return SetError(r, timing.status());
  *r->mutable_timing() = *timing;

  const kernels::Cost cost = op.cost ? op.cost(problem) : kernels::Cost{};
  *r->mutable_roofline() =
      ComputeRoofline(cost, timing->median_ns(), ToProtoDtype(problem.dtype), calibration(), datasheet());
  SetStatus(r, v1::OK, "");
}

}  // namespace kbench::worker
