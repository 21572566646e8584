// The device seam of the measuring pipeline (measure/pipeline.h): what a backend must provide so the
// one pipeline can check and time a variant on it. The pipeline owns the sequence and its policy
// (skip rules, deadline, correctness, harness, roofline); a device owns only its mechanics: where
// tensors live, how a launch runs and is timed, how caches are flushed, which errors it reports.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/op.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "worker/measure/correctness.h"
#include "worker/measure/harness.h"
#include "worker/measure/host_tensors.h"

namespace kbench::worker {

// One variant on one problem with the op's tensors allocated on the device. Lives from the
// correctness check to the end of timing; frees what it holds on destruction.
class DeviceRun {
 public:
  virtual ~DeviceRun() = default;

  // One launch on host tensors (inputs filled, outputs poisoned by the check): inputs go to the
  // device, outputs are poisoned there, the variant runs, outputs come back into `host`.
  virtual absl::Status RunOnHost(std::span<const kernels::Tensor> host) = 0;

  // A reference computed on the device that replaces the op's CPU one for this problem (too large
  // for the CPU), or empty. Its failures show in reference_error(), not as a status.
  virtual ReferenceFn DeviceReference() { return {}; }
  virtual std::string reference_error() const { return ""; }

  // `launches` back-to-back launches on the tensors as the check left them; their time together.
  // cold: the sample follows Flush(), and includes the write-back of what the launch left dirty
  // where the device can measure it (SampleTime.write_back_ns says how much it added).
  virtual absl::StatusOr<SampleTime> Sample(int launches, bool cold) = 0;
  // After timing: one replay of what HOT samples ran in place of launches (a captured graph), as a
  // RunOnHost (inputs uploaded, outputs poisoned, replay, outputs back), so the pipeline checks what
  // was timed. Empty when the samples were plain launches (RunOnHost already checks those).
  virtual worker::RunOnHost ReplayOnHost() { return {}; }
  // Evicts the caches before a COLD sample, outside the timed window.
  virtual void Flush() = 0;
  // What the device adds to the timing (clocks at the start and end, what it subtracted).
  virtual void AnnotateTiming(v1::Timing* timing) { (void)timing; }

  // The status_message of a failed check or timing whose result status is `status`.
  virtual std::string FailureMessage(const absl::Status& s, v1::ResultStatus status) const = 0;
};

class MeasureDevice {
 public:
  virtual ~MeasureDevice() = default;

  // Why this device cannot run the problem ("" when it can), after the rules every device shares
  // (measure/common.h): compute capability, memory.
  virtual std::string SkipReason(const kernels::OpDef& op, const kernels::Variant& variant,
                                 const kernels::Problem& problem) = 0;
  // The variant's kernel resources (registers, shared memory), recorded before it runs.
  virtual void AddResources(const kernels::Variant& variant, const kernels::Problem& problem, v1::Result* r) {
    (void)variant, (void)problem, (void)r;
  }
  // Allocates the op's tensors for one run; `host` are the host tensors the check fills (and, for a
  // host device, the ones it runs on). An error is the result's RUNTIME_ERROR message.
  virtual absl::StatusOr<std::unique_ptr<DeviceRun>> Allocate(const kernels::OpDef& op,
                                                              const kernels::Variant& variant,
                                                              const kernels::Problem& problem,
                                                              const HostTensors& host) = 0;
};

}  // namespace kbench::worker
