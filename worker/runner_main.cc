// kbench-runner: the child process that owns one device for a worker. It reads RunnerRequests from
// one pipe and answers on another (isolation/framing.h); it exits when the worker closes the pipe,
// or after answering with `fatal` once its device context is unusable.
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "core/registry.h"
#include "kbench/v1/runner.pb.h"
#include "worker/convert.h"
#include "worker/cpu_backend.h"
#include "worker/isolation/framing.h"
#ifdef KBENCH_HAVE_CUDA
#include "worker/cuda/cuda_backend.h"
#endif

ABSL_FLAG(std::string, backend, "cpu", "Device kind: cpu or cuda");
ABSL_FLAG(int, device, 0, "Device ordinal (cuda)");
ABSL_FLAG(int, in_fd, 3, "Descriptor the requests arrive on");
ABSL_FLAG(int, out_fd, 4, "Descriptor the replies go to");
ABSL_FLAG(bool, quick_calibration, false, "Smaller, faster calibration (tests)");

namespace kbench::worker {
namespace {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend() {
  const std::string kind = absl::GetFlag(FLAGS_backend);
  const bool quick = absl::GetFlag(FLAGS_quick_calibration);
  if (kind == "cpu") return std::unique_ptr<Backend>(new CpuBackend(CpuBackendOptions{.quick_calibration = quick}));
#ifdef KBENCH_HAVE_CUDA
  if (kind == "cuda") {
    auto b = CudaBackend::Create(absl::GetFlag(FLAGS_device), CudaCalibrationOptions{.quick = quick});
    if (!b.ok()) return b.status();
    return std::unique_ptr<Backend>(std::move(*b));
  }
#endif
  return absl::InvalidArgumentError(absl::StrCat("backend '", kind, "' is not built into this runner"));
}

v1::Result Measure(Backend& backend, const v1::RunnerRequest& req) {
  const kernels::Registry& registry = kernels::BuiltinRegistry();
  const kernels::OpDef* op = registry.Find(req.op());
  const kernels::Variant* variant = op ? op->find_variant(req.variant()) : nullptr;
  if (!variant) {
    v1::Result r;
    r.set_op(req.op());
    r.set_variant(req.variant());
    *r.mutable_problem() = req.problem();
    r.set_status(v1::RUNTIME_ERROR);
    r.set_status_message(absl::StrCat("this runner has no variant '", req.variant(), "' of op '", req.op(), "'"));
    return r;
  }
  if (req.has_calibration()) backend.set_calibration(req.calibration());
  CancelFlag never;
  return backend.MeasureOne(*op, *variant, ToKernelProblem(req.problem()), req.settings(), never);
}

int Serve() {
  const int in = absl::GetFlag(FLAGS_in_fd), out = absl::GetFlag(FLAGS_out_fd);
  absl::StatusOr<std::unique_ptr<Backend>> backend = MakeBackend();
  while (true) {
    v1::RunnerRequest req;
    if (absl::Status s = ReadMessage(in, &req); !s.ok()) return absl::IsUnavailable(s) ? 0 : 1;
    v1::RunnerResponse resp;
    if (!backend.ok()) {
      resp.set_error(std::string(backend.status().message()));
    } else if (req.kind() == v1::RunnerRequest::DESCRIBE) {
      *resp.mutable_device() = (*backend)->device();
      if (auto ds = (*backend)->datasheet()) {
        *resp.mutable_datasheet() = *ds;
      }
    } else if (req.kind() == v1::RunnerRequest::CALIBRATE) {
      auto cal = (*backend)->Calibrate();
      if (cal.ok()) *resp.mutable_calibration() = *cal;
      else resp.set_error(std::string(cal.status().message()));
    } else if (req.kind() == v1::RunnerRequest::MEASURE) {
      *resp.mutable_result() = Measure(**backend, req);
      resp.set_fatal((*backend)->context_lost());
    } else {
      resp.set_error("unknown request kind");
    }
    if (!WriteMessage(out, resp).ok()) return 1;
    if (resp.fatal()) return 3;  // the context is gone: a fresh process gets a fresh one
  }
}

}  // namespace
}  // namespace kbench::worker

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("kbench-runner --backend cpu|cuda --device N: one device's runner, started by kbench-worker");
  absl::ParseCommandLine(argc, argv);
  return kbench::worker::Serve();
}
