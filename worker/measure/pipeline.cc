#include "worker/measure/pipeline.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/runner/convert.h"
#include "worker/measure/common.h"
#include "worker/measure/correctness.h"
#include "worker/measure/harness.h"
#include "worker/measure/host_tensors.h"
#include "worker/measure/roofline.h"

namespace kbench::worker {
namespace {

void SetStatus(v1::Result* r, v1::ResultStatus status, std::string message) {
  r->set_status(status);
  r->set_status_message(std::move(message));
}

// An interruption or failure of the check or the timing, as a result status and the device's words.
void SetError(v1::Result* r, const DeviceRun& run, const absl::Status& s) {
  const v1::ResultStatus status = FailureStatus(s);
  SetStatus(r, status, run.FailureMessage(s, status));
}

}  // namespace

v1::Result NewResult(const Backend& backend, const kernels::OpDef& op, const kernels::Variant& variant,
                     const kernels::Problem& problem) {
  v1::Result r;
  r.set_op(op.name);
  r.set_variant(variant.name);
  *r.mutable_problem() = ToProtoProblem(problem);
  *r.mutable_device() = backend.device();
  return r;
}

void MeasureInto(const Backend& backend, MeasureDevice& device, const kernels::OpDef& op,
                 const kernels::Variant& variant, const kernels::Problem& problem,
                 const v1::MeasurementSettings& settings, const CancelFlag& cancel, v1::Result* r) {
  // Skip: rules every device shares, then the device's own.
  if (std::string why = SkipReason(variant, problem, backend.kind()); !why.empty())
    return SetStatus(r, v1::SKIPPED, why);
  if (std::string why = device.SkipReason(op, variant, problem); !why.empty()) return SetStatus(r, v1::SKIPPED, why);
  device.AddResources(variant, problem, r);

  // Allocate.
  HostTensors host(op, problem);
  absl::StatusOr<std::unique_ptr<DeviceRun>> allocated = device.Allocate(op, variant, problem, host);
  if (!allocated.ok()) return SetStatus(r, v1::RUNTIME_ERROR, std::string(allocated.status().message()));
  DeviceRun& run = **allocated;

  // Check: seeded inputs, poisoned outputs, the variant against the reference (correctness.h).
  const int64_t deadline = SteadyNowNs() + settings.timeout_ns();
  auto interrupted = [&]() -> absl::Status {
    if (cancel.cancelled()) return absl::CancelledError("cancelled");
    if (SteadyNowNs() >= deadline)
      return absl::DeadlineExceededError(absl::StrCat("timeout of ", settings.timeout_ns(), " ns reached"));
    return absl::OkStatus();
  };
  auto run_on_host = [&](std::span<const kernels::Tensor> t) { return run.RunOnHost(t); };
  const ReferenceFn device_reference = run.DeviceReference();
  absl::StatusOr<v1::Correctness> correctness =
      CheckCorrectness(op, problem, host, settings, run_on_host, interrupted, device_reference);
  if (correctness.ok() && device_reference) correctness->set_reference(kGpuReferenceName);
  if (std::string e = run.reference_error(); !e.empty()) return SetStatus(r, v1::RUNTIME_ERROR, e);
  if (!correctness.ok()) return SetError(r, run, correctness.status());
  *r->mutable_correctness() = *correctness;
  if (!correctness->passed()) return SetStatus(r, v1::INCORRECT, DescribeFailure(*correctness));

  // Time. Inputs stay as the last trial left them: seeded random data, never zeros.
  HarnessHooks hooks;
  const bool cold = settings.cache_mode() != v1::HOT;
  hooks.sample = [&](int launches) { return run.Sample(launches, cold); };
  if (settings.cache_mode() != v1::HOT) hooks.flush = [&] { run.Flush(); };
  hooks.cancel = &cancel;
  hooks.deadline_ns = deadline;
  absl::StatusOr<v1::Timing> timing = Measure(settings, hooks);
  if (!timing.ok()) return SetError(r, run, timing.status());
  run.AnnotateTiming(&*timing);

  // Check again: a variant that stops doing its work after the check (after N launches, once warm)
  // must not be timed as correct. One more trial, the check's last one, on poisoned outputs; only
  // cancellation interrupts it, since timing may have used the time up to the deadline.
  v1::MeasurementSettings again = settings;
  again.set_correctness_trials(1);
  again.set_seed(settings.seed() + static_cast<uint64_t>(std::max(1, settings.correctness_trials()) - 1));
  auto cancelled = [&]() -> absl::Status {
    return cancel.cancelled() ? absl::CancelledError("cancelled") : absl::OkStatus();
  };
  // A launch, then (HOT) one replay of the graph the samples ran: each is what was timed.
  const std::pair<const char*, RunOnHost> rechecks[] = {{"after timing: ", run_on_host},
                                                        {"after timing (graph replay): ", run.ReplayOnHost()}};
  for (const auto& [label, rerun] : rechecks) {
    if (!rerun) continue;
    absl::StatusOr<v1::Correctness> recheck =
        CheckCorrectness(op, problem, host, again, rerun, cancelled, device_reference);
    if (std::string e = run.reference_error(); !e.empty()) return SetStatus(r, v1::RUNTIME_ERROR, e);
    if (!recheck.ok()) return SetError(r, run, recheck.status());
    if (!recheck->passed()) {
      if (device_reference) recheck->set_reference(kGpuReferenceName);
      *r->mutable_correctness() = *recheck;
      return SetStatus(r, v1::INCORRECT, absl::StrCat(label, DescribeFailure(*recheck)));
    }
  }

  // Roofline.
  *r->mutable_timing() = *timing;
  const kernels::Cost cost = op.cost ? op.cost(problem) : kernels::Cost{};
  const RooflineContext where{.cache_mode = timing->cache_mode(),
                              .working_set_bytes = static_cast<double>(TensorBytes(op, problem)),
                              .l2_bytes = backend.device().l2_cache_bytes()};
  *r->mutable_roofline() = ComputeRoofline(cost, timing->median_ns(), ToProtoDtype(problem.dtype),
                                           backend.calibration(), backend.datasheet(), where);
  SetStatus(r, v1::OK, "");
}

}  // namespace kbench::worker
