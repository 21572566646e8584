#include "worker/cuda/cuda_backend.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "worker/convert.h"
#include "worker/correctness.h"
#include "worker/cuda/cuda_util.cuh"
#include "worker/cuda/datasheet.h"
#include "worker/cuda/device_query.h"
#include "worker/cuda/nvml.h"
#include "worker/cuda/resources.h"
#include "worker/harness.h"
#include "worker/host_tensors.h"
#include "worker/measure_common.h"
#include "worker/roofline.h"

namespace kbench::worker {
namespace {

bool IsSticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

// Device buffers for an op's tensors, freed on scope exit.
class DeviceTensors {
 public:
  DeviceTensors(const kernels::OpDef& op, const kernels::Problem& problem) {
    for (const auto& spec : op.tensors) {
      kernels::Tensor t{nullptr, spec.numel(problem), spec.dtype(problem)};
      const size_t bytes = std::max<size_t>(1, static_cast<size_t>(t.numel * kernels::DtypeBytes(t.dtype)));
      if (cudaError_t e = cudaMalloc(&t.data, bytes); e != cudaSuccess) {
        error_ = e;
        cudaGetLastError();
        return;
      }
      tensors_.push_back(t);
    }
  }
  ~DeviceTensors() {
    for (auto& t : tensors_) cudaFree(t.data);
  }
  cudaError_t error() const { return error_; }
  std::span<const kernels::Tensor> all() const { return tensors_; }

 private:
  std::vector<kernels::Tensor> tensors_;
  cudaError_t error_ = cudaSuccess;
};

size_t Bytes(const kernels::Tensor& t) { return static_cast<size_t>(t.numel * kernels::DtypeBytes(t.dtype)); }

}  // namespace

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(int ordinal, CudaCalibrationOptions options) {
  auto info = QueryCudaDevice(ordinal);
  if (!info.ok()) return info.status();
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->ordinal_ = ordinal;
  b->calibration_options_ = options;
  b->device_ = *info;
  b->datasheet_ = LookupDatasheet(info->name(), info->multiprocessor_count(), info->memory_bytes());
  auto check = [](cudaError_t e, const char* what) -> absl::Status {
    if (e == cudaSuccess) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat(what, ": ", cudaGetErrorString(e)));
  };
  if (auto s = check(cudaSetDevice(ordinal), "cudaSetDevice"); !s.ok()) return s;
  if (auto s = check(cudaStreamCreateWithFlags(&b->stream_, cudaStreamNonBlocking), "cudaStreamCreate"); !s.ok()) return s;
  if (auto s = check(cudaEventCreate(&b->start_), "cudaEventCreate"); !s.ok()) return s;
  if (auto s = check(cudaEventCreate(&b->stop_), "cudaEventCreate"); !s.ok()) return s;
  // Twice the L2: whatever a sample reads was evicted by the flush (DESIGN section 3).
  b->flush_bytes_ = std::max<size_t>(2 * static_cast<size_t>(info->l2_cache_bytes()), 8u << 20);
  if (auto s = check(cudaMalloc(&b->flush_buffer_, b->flush_bytes_), "cudaMalloc(flush)"); !s.ok()) return s;
  return b;
}

CudaBackend::~CudaBackend() {
  if (flush_buffer_) cudaFree(flush_buffer_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

absl::StatusOr<v1::Calibration> CudaBackend::Calibrate() { return CalibrateCuda(device_, calibration_options_); }

std::string CudaBackend::Fail(cudaError_t e, const char* what) {
  cudaGetLastError();  // clears a non-sticky error; a sticky one stays and shows here again
  if (IsSticky(e) || cudaDeviceSynchronize() != cudaSuccess) context_lost_ = true;
  return absl::StrCat(what, ": ", cudaGetErrorName(e), ": ", cudaGetErrorString(e));
}

v1::Result CudaBackend::MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant,
                                   const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                   const CancelFlag& cancel) {
  v1::Result r;
  r.set_op(op.name);
  r.set_variant(variant.name);
  *r.mutable_problem() = ToProtoProblem(problem);
  *r.mutable_device() = device_;
  auto skip = [&](std::string why) {
    r.set_status(v1::SKIPPED);
    r.set_status_message(std::move(why));
    return r;
  };
  if (std::string why = SkipReason(variant, problem, kernels::Backend::kCuda); !why.empty()) return skip(why);
  const int cc = device_.compute_capability_major() * 10 + device_.compute_capability_minor();
  if (variant.min_compute_capability > cc)
    return skip(absl::StrCat("needs compute capability ", variant.min_compute_capability / 10, ".",
                             variant.min_compute_capability % 10, "; this device is ", cc / 10, ".", cc % 10));
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  const int64_t footprint = TensorBytes(op, problem);
  if (static_cast<double>(footprint) > 0.9 * static_cast<double>(free_bytes))
    return skip(absl::StrCat("needs ", footprint, " bytes of device memory; ", free_bytes, " free"));

  if (variant.launches) {
    for (auto& kr : KernelResourcesOf(variant.launches(problem), ordinal_)) *r.add_resources() = std::move(kr);
  }

  DeviceTensors dev(op, problem);
  if (dev.error() != cudaSuccess) {
    r.set_status(v1::RUNTIME_ERROR);
    r.set_status_message(Fail(dev.error(), "cudaMalloc"));
    return r;
  }
  const int64_t deadline = SteadyNowNs() + settings.timeout_ns();
  std::string cuda_error;

  // Correctness: upload the seeded inputs, poison the outputs (0xFF bytes: NaN in f32/bf16/f16),
  // launch, copy the outputs back; the check itself is the host one every backend shares.
  HostTensors host(op, problem);
  auto run_on_host = [&](std::span<const kernels::Tensor> h) -> absl::Status {
    auto d = dev.all();
    for (size_t i = 0; i < op.tensors.size(); ++i) {
      cudaError_t e = op.tensors[i].is_output ? cudaMemsetAsync(d[i].data, 0xff, Bytes(d[i]), stream_)
                                              : cudaMemcpyAsync(d[i].data, h[i].data, Bytes(h[i]), cudaMemcpyHostToDevice, stream_);
      if (e != cudaSuccess) return absl::InternalError(cuda_error = Fail(e, "upload"));
    }
    if (int e = variant.run_cuda(problem, d, stream_); e != 0)
      return absl::InternalError(cuda_error = Fail(static_cast<cudaError_t>(e), "launch"));
    if (cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess)
      return absl::InternalError(cuda_error = Fail(e, "kernel"));
    for (size_t i = 0; i < op.tensors.size(); ++i) {
      if (!op.tensors[i].is_output) continue;
      if (cudaError_t e = cudaMemcpy(h[i].data, d[i].data, Bytes(d[i]), cudaMemcpyDeviceToHost); e != cudaSuccess)
        return absl::InternalError(cuda_error = Fail(e, "download"));
    }
    return absl::OkStatus();
  };
  auto interrupted = [&]() -> absl::Status {
    if (cancel.cancelled()) return absl::CancelledError("cancelled");
    if (SteadyNowNs() > deadline) return absl::DeadlineExceededError("timeout during the correctness check");
    return absl::OkStatus();
  };
  // GEMM 8192^3 is hours of CPU fp64: past the op's threshold its device fp64 reference checks the
  // variant instead (tested against the CPU reference on small shapes). It runs after the variant,
  // on the inputs already uploaded for it, into fp64 buffers that are then copied back.
  const kernels::OpDef* checked_op = &op;
  kernels::OpDef device_reference_op;
  std::string reference_error;
  const bool device_reference = op.gpu_reference && op.cost && op.cost(problem).flops > op.gpu_reference_above_flops;
  if (device_reference) {
    device_reference_op = op;
    device_reference_op.reference = [&](const kernels::Problem& p, std::span<const kernels::Tensor>,
                                        std::vector<std::vector<double>>& expected) {
      std::vector<kernels::Tensor> inputs;
      for (size_t i = 0; i < op.tensors.size(); ++i)
        if (!op.tensors[i].is_output) inputs.push_back(dev.all()[i]);
      std::vector<double*> outs(expected.size(), nullptr);
      cudaError_t e = cudaSuccess;
      for (size_t k = 0; k < expected.size() && e == cudaSuccess; ++k)
        e = cudaMalloc(&outs[k], std::max<size_t>(1, expected[k].size()) * sizeof(double));
      if (e == cudaSuccess) e = static_cast<cudaError_t>(op.gpu_reference(p, inputs, outs, stream_));
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);
      for (size_t k = 0; k < expected.size() && e == cudaSuccess; ++k)
        e = cudaMemcpy(expected[k].data(), outs[k], expected[k].size() * sizeof(double), cudaMemcpyDeviceToHost);
      for (double* o : outs)
        if (o) cudaFree(o);
      if (e != cudaSuccess) {
        reference_error = Fail(e, "device reference");
        for (auto& v : expected) std::fill(v.begin(), v.end(), std::numeric_limits<double>::quiet_NaN());
      }
    };
    checked_op = &device_reference_op;
  }
  auto correctness = CheckCorrectness(*checked_op, problem, host, settings, run_on_host, interrupted);
  if (correctness.ok() && device_reference) correctness->set_reference("gpu fp64");
  if (!reference_error.empty()) {
    r.set_status(v1::RUNTIME_ERROR);
    r.set_status_message(reference_error);
    return r;
  }
  if (!correctness.ok()) {
    r.set_status(FailureStatus(correctness.status()));
    r.set_status_message(std::string(correctness.status().message()));
    return r;
  }
  *r.mutable_correctness() = *correctness;
  if (!correctness->passed()) {
    r.set_status(v1::INCORRECT);
    r.set_status_message(DescribeFailure(*correctness));
    return r;
  }

  // Timing. Inputs stay as the last trial left them: seeded random data, never zeros.
  Nvml* nvml = Nvml::Get();
  int discarded = 0;
  bool throttled = false;
  std::map<int, cudaGraphExec_t> graphs;  // HOT: one graph of n launches per batch size
  auto graph_for = [&](int n) -> cudaGraphExec_t {
    if (auto it = graphs.find(n); it != graphs.end()) return it->second;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool ok = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    for (int i = 0; ok && i < n; ++i) ok = variant.run_cuda(problem, dev.all(), stream_) == 0;
    ok = cudaStreamEndCapture(stream_, &g) == cudaSuccess && ok;
    ok = ok && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess;
    if (g) cudaGraphDestroy(g);
    if (!ok) {
      cudaGetLastError();
      exec = nullptr;  // not capturable (e.g. allocates): plain back-to-back launches instead
    }
    graphs[n] = exec;
    return exec;
  };
  HarnessHooks hooks;
  hooks.cancel = &cancel;
  hooks.deadline_ns = deadline;
  hooks.flush = [&] { FlushL2(stream_, flush_buffer_, flush_bytes_); };
  hooks.sample = [&](int launches) -> absl::StatusOr<double> {
    for (int attempt = 0;; ++attempt) {
      cudaGraphExec_t graph = launches > 1 ? graph_for(launches) : nullptr;
      // The spin covers the host's enqueue of the event and the launches behind it.
      const uint64_t spin_ns = std::min<uint64_t>(20'000 + (graph ? 0 : 8'000ull * launches), 2'000'000);
      if (cudaError_t e = LaunchSpin(stream_, spin_ns); e != cudaSuccess) return absl::InternalError(Fail(e, "spin"));
      cudaEventRecord(start_, stream_);
      if (graph) {
        if (cudaError_t e = cudaGraphLaunch(graph, stream_); e != cudaSuccess)
          return absl::InternalError(cuda_error = Fail(e, "graph launch"));
      } else {
        for (int i = 0; i < launches; ++i)
          if (int e = variant.run_cuda(problem, dev.all(), stream_); e != 0)
            return absl::InternalError(cuda_error = Fail(static_cast<cudaError_t>(e), "launch"));
      }
      cudaEventRecord(stop_, stream_);
      if (cudaError_t e = cudaEventSynchronize(stop_); e != cudaSuccess)
        return absl::InternalError(cuda_error = Fail(e, "kernel"));
      float ms = 0;
      cudaEventElapsedTime(&ms, start_, stop_);
      // A sample taken while the clocks were pulled down by power or heat is not the kernel's time.
      if (nvml && attempt < 20) {
        auto clocks = nvml->Read(device_.uuid());
        if (clocks && clocks->throttled() && clocks->max_sm_clock_mhz &&
            clocks->sm_clock_mhz < 0.9 * clocks->max_sm_clock_mhz) {
          ++discarded;
          throttled = true;
          continue;
        }
      }
      return static_cast<double>(ms) * 1e6;
    }
  };
  auto timing = Measure(settings, hooks);
  for (auto& [n, g] : graphs)
    if (g) cudaGraphExecDestroy(g);
  if (!timing.ok()) {
    r.set_status(FailureStatus(timing.status()));
    r.set_status_message(cuda_error.empty() ? std::string(timing.status().message()) : cuda_error);
    return r;
  }
  timing->set_discarded_throttled(discarded);
  timing->set_throttled(throttled);
  *r.mutable_timing() = *timing;
  *r.mutable_roofline() =
      ComputeRoofline(op.cost(problem), timing->median_ns(), ToProtoDtype(problem.dtype), calibration(), datasheet_);
  r.set_status(v1::OK);
  return r;
}

}  // namespace kbench::worker
