// kbench-runner: the child process that owns one device for a worker. It reads RunnerRequests from
// one pipe and answers on another (isolation/framing.h); it exits when the worker closes the pipe,
// or after answering with `fatal` once its device context is unusable.
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <memory>

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "core/registry.h"
#include "kbench/runner/runner.pb.h"
#include "worker/help_flags.h"
#include "worker/runner/convert.h"
#include "worker/cpu/cpu_backend.h"
#include "worker/custom/runner_custom.h"
#include "worker/isolation/framing.h"
#include "worker/plugin/runner_kernels.h"
#include "worker/runner/problem_table.h"
#ifdef KBENCH_HAVE_CUDA
#include "worker/cuda/cuda_backend.h"
#endif

ABSL_FLAG(std::string, backend, "cpu", "Device kind: cpu or cuda");
ABSL_FLAG(int, device, 0, "Device ordinal (cuda)");
ABSL_FLAG(int, in_fd, 3, "Descriptor the requests arrive on");
ABSL_FLAG(int, out_fd, 4, "Descriptor the replies go to");
ABSL_FLAG(bool, quick_calibration, false, "Smaller, faster calibration (tests)");
ABSL_FLAG(int, cpu_device, -1,
          "cpu: CPU \"device\" N of a multi-device test worker (uuid <host uuid>-cpuN); -1: the host itself");

namespace kbench::worker {
namespace {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend() {
  const std::string kind = absl::GetFlag(FLAGS_backend);
  const bool quick = absl::GetFlag(FLAGS_quick_calibration);
  if (kind == "cpu")
    return std::unique_ptr<Backend>(
        new CpuBackend(CpuBackendOptions{.quick_calibration = quick, .device_index = absl::GetFlag(FLAGS_cpu_device)}));
#ifdef KBENCH_HAVE_CUDA
  if (kind == "cuda") {
    auto b = CudaBackend::Create(absl::GetFlag(FLAGS_device), CudaCalibrationOptions{.quick = quick});
    if (!b.ok()) return b.status();
    return std::unique_ptr<Backend>(std::move(*b));
  }
#endif
  return absl::InvalidArgumentError(absl::StrCat("backend '", kind, "' is not built into this runner"));
}

v1::Result Measure(Backend& backend, RunnerKernels& libraries, const runner::RunnerRequest& req) {
  // The runner's own kernel library, loaded through the plugin ABI like any job's plugin.
  absl::StatusOr<const kernels::plugin::LoadedPlugin*> own = libraries.Library("");
  if (!own.ok()) {
    v1::Result r;
    r.set_op(req.op());
    r.set_variant(req.variant());
    *r.mutable_problem() = req.problem();
    r.set_status(v1::RUNTIME_ERROR);
    r.set_status_message(std::string(own.status().message()));
    return r;
  }
  const kernels::Registry& registry = (*own)->registry();
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
  RunnerKernels libraries;
  ProblemTable problems;  // The jobs' problems, sent once by their CHECK_PROBLEMS.
  while (true) {
    runner::RunnerRequest req;
    if (absl::Status s = ReadMessage(in, &req); !s.ok()) return absl::IsUnavailable(s) ? 0 : 1;
    runner::RunnerResponse resp;
    if (!backend.ok()) {
      resp.set_error(std::string(backend.status().message()));
    } else if (req.kind() == runner::RunnerRequest::MEASURE && !problems.Resolve(req, &resp)) {
      // resp says the table is unknown: the worker sends the check again.
    } else if (req.kind() == runner::RunnerRequest::DESCRIBE) {
      libraries.Describe(**backend, req, &resp);  // The catalog of its own library, or of plugin_path's.
    } else if (req.kind() == runner::RunnerRequest::CHECK_PROBLEMS) {
      libraries.CheckProblems(req, &resp);  // For the worker's planner: the op's own rule.
      if (resp.error().empty()) problems.Keep(req);
    } else if (req.kind() == runner::RunnerRequest::CALIBRATE) {
      auto cal = (*backend)->Calibrate();
      if (cal.ok()) *resp.mutable_calibration() = *cal;
      else resp.set_error(std::string(cal.status().message()));
    } else if (req.kind() == runner::RunnerRequest::MEASURE && (!req.plugin_path().empty() || req.has_ab())) {
      libraries.Measure(**backend, req, &resp);  // A job's plugin, or an A/B pair.
      resp.set_fatal((*backend)->context_lost());
    } else if (req.kind() == runner::RunnerRequest::MEASURE && req.has_custom()) {
      *resp.mutable_result() = MeasureCustomRequest(**backend, req);  // worker/custom/
      resp.set_fatal((*backend)->context_lost());
    } else if (req.kind() == runner::RunnerRequest::MEASURE) {
      *resp.mutable_result() = Measure(**backend, libraries, req);
      resp.set_fatal((*backend)->context_lost());
    } else {
      resp.set_error("unknown request kind");
    }
    if (!WriteMessage(out, resp).ok()) return 1;
    if (resp.fatal()) return 3;  // the context is gone: a fresh process gets a fresh one
  }
}

}  // namespace

// absl's handler prints the faulting PC, but code in a library without symbols (a vendor library,
// a plugin) shows as "(unknown)": first name the library and the offset in it (dladdr is not
// async-signal-safe in theory; the process is about to die either way), then let absl's run.
void NameFaultingLibrary() {
  static struct sigaction previous;
  struct sigaction sa {};
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sa.sa_sigaction = [](int sig, siginfo_t* info, void* uctx) {
    const auto* uc = static_cast<const ucontext_t*>(uctx);
#if defined(__x86_64__)
    const void* pc = reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RIP]);
#else
    const void* pc = info->si_addr;
#endif
    char line[512];
    int n = snprintf(line, sizeof line, "kbench-runner: signal %d at %p, fault address %p; frames:\n", sig, pc, info->si_addr);
    if (n > 0) (void)!write(2, line, static_cast<size_t>(std::min<int>(n, sizeof line - 1)));
    // The faulting PC first (the signal frame hides it from backtrace's view), then the callers.
    void* frames[32];
    frames[0] = const_cast<void*>(pc);
    const int depth = 1 + backtrace(frames + 1, 31);
    for (int i = 0; i < depth; ++i) {
      Dl_info dl{};
      if (dladdr(frames[i], &dl) != 0 && dl.dli_fname != nullptr)
        n = snprintf(line, sizeof line, "  #%d %s+0x%lx (%s)\n", i, dl.dli_fname,
                     static_cast<unsigned long>(static_cast<const char*>(frames[i]) - static_cast<const char*>(dl.dli_fbase)),
                     dl.dli_sname ? dl.dli_sname : "?");
      else
        n = snprintf(line, sizeof line, "  #%d %p\n", i, frames[i]);
      if (n > 0) (void)!write(2, line, static_cast<size_t>(std::min<int>(n, sizeof line - 1)));
    }
    sigaction(sig, &previous, nullptr);
    raise(sig);
  };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &previous);
}

}  // namespace kbench::worker

int main(int argc, char** argv) {
  // A fault in a kernel's host code (or ours) ends this process, and the worker reports its last
  // output with the RUNTIME_ERROR: make that a symbolized stack trace.
  absl::InitializeSymbolizer(argv[0]);
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions{});
  kbench::worker::NameFaultingLibrary();
  absl::SetProgramUsageMessage("kbench-runner --backend cpu|cuda --device N: one device's runner, started by kbench-worker");
  kbench::worker::HelpListsFlagsOf("worker/runner/runner_main.cc");
  absl::ParseCommandLine(argc, argv);
  return kbench::worker::Serve();
}
