#include "worker/cuda/cuda_measure.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/cuda/cuda_util.cuh"
#include "worker/cuda/nvml.h"
#include "worker/cuda/resources.h"
#include "worker/measure/common.h"

namespace kbench::worker {
namespace {

size_t Bytes(const kernels::Tensor& t) { return static_cast<size_t>(t.numel * kernels::DtypeBytes(t.dtype)); }

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

// The backend's stream, events and flush buffer one run uses; fail records a CUDA error (and a lost
// context) and returns its text.
struct CudaHandles {
  cudaStream_t stream;
  cudaEvent_t start, mid, stop;
  void* flush_buffer;
  size_t flush_bytes;
  void* write_back_buffer;  // L2-sized: read after a COLD launch, inside the window
  size_t write_back_bytes;
  std::string uuid;
  std::function<std::string(cudaError_t, const char*)> fail;
};

class CudaRun final : public DeviceRun {
 public:
  CudaRun(CudaHandles b, const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem)
      : b_(std::move(b)), op_(op), variant_(variant), problem_(problem), dev_(op, problem) {}
  ~CudaRun() override {
    for (auto& [n, g] : graphs_)
      if (g) cudaGraphExecDestroy(g);
  }
  cudaError_t allocation_error() const { return dev_.error(); }

  // Upload the seeded inputs, poison the outputs (0xFF bytes: NaN in f32/bf16/f16), launch, copy
  // the outputs back; the check itself is the host one every backend shares.
  absl::Status RunOnHost(std::span<const kernels::Tensor> h) override {
    return RunOnHostWith(h, "launch", [this] { return variant_.run_cuda(problem_, dev_.all(), b_.stream); });
  }

  // The graph the last HOT sample replayed, replayed once more on freshly uploaded inputs: its
  // launches were captured once, so a variant whose captured work differs from its launches shows.
  worker::RunOnHost ReplayOnHost() override {
    if (!last_graph_) return {};
    return [this](std::span<const kernels::Tensor> h) {
      return RunOnHostWith(h, "graph launch", [this] { return static_cast<int>(cudaGraphLaunch(last_graph_, b_.stream)); });
    };
  }

  absl::Status RunOnHostWith(std::span<const kernels::Tensor> h, const char* what, const std::function<int()>& launch) {
    auto d = dev_.all();
    cudaStream_t stream = b_.stream;
    for (size_t i = 0; i < op_.tensors.size(); ++i) {
      cudaError_t e = op_.tensors[i].is_output
                          ? cudaMemsetAsync(d[i].data, 0xff, Bytes(d[i]), stream)
                          : cudaMemcpyAsync(d[i].data, h[i].data, Bytes(h[i]), cudaMemcpyHostToDevice, stream);
      if (e != cudaSuccess) return absl::InternalError(cuda_error_ = b_.fail(e, "upload"));
    }
    if (int e = launch(); e != 0) return absl::InternalError(cuda_error_ = b_.fail(static_cast<cudaError_t>(e), what));
    if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
      return absl::InternalError(cuda_error_ = b_.fail(e, "kernel"));
    for (size_t i = 0; i < op_.tensors.size(); ++i) {
      if (!op_.tensors[i].is_output) continue;
      if (cudaError_t e = cudaMemcpy(h[i].data, d[i].data, Bytes(d[i]), cudaMemcpyDeviceToHost); e != cudaSuccess)
        return absl::InternalError(cuda_error_ = b_.fail(e, "download"));
    }
    return absl::OkStatus();
  }

  // GEMM 8192^3 is hours of CPU fp64: past the op's threshold its device fp64 reference checks the
  // variant instead (tested against the CPU reference on small shapes). It runs after the variant,
  // on the inputs already uploaded for it, into fp64 buffers that are then copied back.
  ReferenceFn DeviceReference() override {
    const bool device_reference =
        op_.gpu_reference && op_.cost && op_.cost(problem_).flops > op_.gpu_reference_above_flops;
    if (!device_reference) return {};
    return [this](const kernels::Problem& p, std::span<const kernels::Tensor>,
                  std::vector<std::vector<double>>& expected) {
      std::vector<kernels::Tensor> inputs;
      for (size_t i = 0; i < op_.tensors.size(); ++i)
        if (!op_.tensors[i].is_output) inputs.push_back(dev_.all()[i]);
      std::vector<double*> outs(expected.size(), nullptr);
      cudaError_t e = cudaSuccess;
      for (size_t k = 0; k < expected.size() && e == cudaSuccess; ++k)
        e = cudaMalloc(&outs[k], std::max<size_t>(1, expected[k].size()) * sizeof(double));
      if (e == cudaSuccess) e = static_cast<cudaError_t>(op_.gpu_reference(p, inputs, outs, b_.stream));
      if (e == cudaSuccess) e = cudaStreamSynchronize(b_.stream);
      for (size_t k = 0; k < expected.size() && e == cudaSuccess; ++k)
        e = cudaMemcpy(expected[k].data(), outs[k], expected[k].size() * sizeof(double), cudaMemcpyDeviceToHost);
      for (double* o : outs)
        if (o) cudaFree(o);
      if (e != cudaSuccess) {
        reference_error_ = b_.fail(e, "device reference");
        for (auto& v : expected) std::fill(v.begin(), v.end(), std::numeric_limits<double>::quiet_NaN());
      }
    };
  }
  std::string reference_error() const override { return reference_error_; }

  // COLD: spin, start, the launch, mid, a read of an L2-sized buffer (it evicts the launch's dirty
  // lines, whose write-back lands inside the window), stop; less that read's time on a clean L2
  // (measured once per run). HOT: spin, start, the graph of launches, stop.
  absl::StatusOr<SampleTime> Sample(int launches, bool cold) override {
    if (!nvml_read_) {
      nvml_ = Nvml::Get();
      nvml_read_ = true;
      clocks_start_ = ReadClocks();
    }
    cudaStream_t stream = b_.stream;
    if (window_offset_ns_ < 0) {
      absl::StatusOr<double> offset = WindowOffsetNs();
      if (!offset.ok()) return offset.status();
      window_offset_ns_ = *offset;
    }
    const bool write_back = cold && launches == 1 && b_.write_back_bytes > 0;
    if (write_back && clean_read_ns_ < 0) {
      absl::StatusOr<double> clean = CleanReadNs();
      if (!clean.ok()) return clean.status();
      clean_read_ns_ = *clean;
    }
    cudaGraphExec_t graph = launches > 1 ? GraphFor(launches) : nullptr;
    // The spin covers the host's enqueue of the event and the launches behind it.
    const uint64_t spin_ns = std::min<uint64_t>(20'000 + (graph ? 0 : 8'000ull * launches), 2'000'000);
    if (cudaError_t e = LaunchSpin(stream, spin_ns); e != cudaSuccess) return absl::InternalError(b_.fail(e, "spin"));
    cudaEventRecord(b_.start, stream);
    if (graph) {
      if (cudaError_t e = cudaGraphLaunch(graph, stream); e != cudaSuccess)
        return absl::InternalError(cuda_error_ = b_.fail(e, "graph launch"));
      last_graph_ = graph;  // What ReplayOnHost checks after timing.
    } else {
      for (int i = 0; i < launches; ++i)
        if (int e = variant_.run_cuda(problem_, dev_.all(), stream); e != 0)
          return absl::InternalError(cuda_error_ = b_.fail(static_cast<cudaError_t>(e), "launch"));
    }
    if (write_back) {
      cudaEventRecord(b_.mid, stream);
      if (cudaError_t e = FlushL2(stream, b_.write_back_buffer, b_.write_back_bytes); e != cudaSuccess)
        return absl::InternalError(cuda_error_ = b_.fail(e, "write-back read"));
    }
    cudaEventRecord(b_.stop, stream);
    if (cudaError_t e = cudaEventSynchronize(b_.stop); e != cudaSuccess)
      return absl::InternalError(cuda_error_ = b_.fail(e, "kernel"));
    float ms = 0;
    cudaEventElapsedTime(&ms, b_.start, b_.stop);
    SampleTime out{.ns = static_cast<double>(ms) * 1e6 - (kSubtractWindowOffset ? window_offset_ns_ : 0)};
    if (write_back) {
      float tail_ms = 0;
      cudaEventElapsedTime(&tail_ms, b_.mid, b_.stop);
      out.write_back_ns = static_cast<double>(tail_ms) * 1e6 - clean_read_ns_;
      out.ns -= clean_read_ns_;
    }
    // A sample taken while the clocks were pulled down by power or heat is not the kernel's time:
    // kept, flagged, left out of the statistics.
    if (nvml_) {
      auto clocks = nvml_->Read(b_.uuid);
      out.throttled = clocks && clocks->throttled() && clocks->max_sm_clock_mhz &&
                      clocks->sm_clock_mhz < 0.9 * clocks->max_sm_clock_mhz;
    }
    return out;
  }
  void Flush() override { FlushL2(b_.stream, b_.flush_buffer, b_.flush_bytes); }
  void AnnotateTiming(v1::Timing* timing) override {
    if (clean_read_ns_ >= 0) timing->set_write_back_flush_ns(clean_read_ns_);
    if (kSubtractWindowOffset && window_offset_ns_ > 0) timing->set_window_offset_ns(window_offset_ns_);
    if (clocks_start_) *timing->mutable_clocks_start() = *clocks_start_;
    if (std::optional<v1::DeviceClocks> end = ReadClocks()) *timing->mutable_clocks_end() = *end;
  }
  std::string FailureMessage(const absl::Status& s, v1::ResultStatus) const override {
    return cuda_error_.empty() ? std::string(s.message()) : cuda_error_;
  }

 private:
  // The write-back read on a clean L2: after a flush (only clean lines in L2), the same read of the
  // same buffer between two events; the median of a few.
  absl::StatusOr<double> CleanReadNs() {
    std::vector<double> ns;
    for (int i = 0; i < kCleanReads; ++i) {
      FlushL2(b_.stream, b_.flush_buffer, b_.flush_bytes);
      LaunchSpin(b_.stream, 20'000);
      cudaEventRecord(b_.mid, b_.stream);
      if (cudaError_t e = FlushL2(b_.stream, b_.write_back_buffer, b_.write_back_bytes); e != cudaSuccess)
        return absl::InternalError(cuda_error_ = b_.fail(e, "write-back read"));
      cudaEventRecord(b_.stop, b_.stream);
      if (cudaError_t e = cudaEventSynchronize(b_.stop); e != cudaSuccess)
        return absl::InternalError(cuda_error_ = b_.fail(e, "write-back read"));
      float ms = 0;
      cudaEventElapsedTime(&ms, b_.mid, b_.stop);
      ns.push_back(static_cast<double>(ms) * 1e6);
    }
    std::sort(ns.begin(), ns.end());
    return ns[ns.size() / 2];
  }

  // The event window's own cost (worker/README.md, "What a COLD sample contains"): the two events
  // back to back behind the spin, nothing between them; the median of a few.
  absl::StatusOr<double> WindowOffsetNs() {
    std::vector<double> ns;
    for (int i = 0; i < kOffsetProbes; ++i) {
      LaunchSpin(b_.stream, 20'000);
      cudaEventRecord(b_.start, b_.stream);
      cudaEventRecord(b_.stop, b_.stream);
      if (cudaError_t e = cudaEventSynchronize(b_.stop); e != cudaSuccess)
        return absl::InternalError(cuda_error_ = b_.fail(e, "window probe"));
      float ms = 0;
      cudaEventElapsedTime(&ms, b_.start, b_.stop);
      ns.push_back(static_cast<double>(ms) * 1e6);
    }
    std::sort(ns.begin(), ns.end());
    return ns[ns.size() / 2];
  }

  std::optional<v1::DeviceClocks> ReadClocks() {
    if (!nvml_) return std::nullopt;
    std::optional<ClockState> c = nvml_->Read(b_.uuid);
    if (!c) return std::nullopt;
    v1::DeviceClocks out;
    out.set_sm_clock_mhz(static_cast<int32_t>(c->sm_clock_mhz));
    out.set_memory_clock_mhz(static_cast<int32_t>(c->memory_clock_mhz));
    out.set_power_watts(c->power_mw / 1000.0);
    out.set_temperature_c(static_cast<int32_t>(c->temperature_c));
    out.set_throttle_reasons(c->throttle_reasons);
    return out;
  }

  // HOT: one graph of n launches per batch size.
  cudaGraphExec_t GraphFor(int n) {
    if (auto it = graphs_.find(n); it != graphs_.end()) return it->second;
    cudaStream_t stream = b_.stream;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    for (int i = 0; ok && i < n; ++i) ok = variant_.run_cuda(problem_, dev_.all(), stream) == 0;
    ok = cudaStreamEndCapture(stream, &g) == cudaSuccess && ok;
    ok = ok && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess;
    if (g) cudaGraphDestroy(g);
    if (!ok) {
      cudaGetLastError();
      exec = nullptr;  // not capturable (e.g. allocates): plain back-to-back launches instead
    }
    graphs_[n] = exec;
    return exec;
  }

  CudaHandles b_;
  const kernels::OpDef& op_;
  const kernels::Variant& variant_;
  const kernels::Problem& problem_;
  DeviceTensors dev_;
  std::string cuda_error_, reference_error_;
  std::map<int, cudaGraphExec_t> graphs_;
  cudaGraphExec_t last_graph_ = nullptr;  // owned by graphs_
  Nvml* nvml_ = nullptr;
  bool nvml_read_ = false;
  std::optional<v1::DeviceClocks> clocks_start_;
  static constexpr int kCleanReads = 7;
  double clean_read_ns_ = -1;  // < 0: not measured yet
  // The event window's own cost (worker/README.md, "What a COLD sample contains"): measured per run,
  // subtracted from every sample.
  static constexpr bool kSubtractWindowOffset = true;
  static constexpr int kOffsetProbes = 9;
  double window_offset_ns_ = -1;
};

}  // namespace

std::string CudaMeasureDevice::SkipReason(const kernels::OpDef& op, const kernels::Variant& variant,
                                          const kernels::Problem& problem) {
  const v1::DeviceInfo& device = backend_.device_;
  const int cc = device.compute_capability_major() * 10 + device.compute_capability_minor();
  if (variant.min_compute_capability > cc)
    return absl::StrCat("needs compute capability ", variant.min_compute_capability / 10, ".",
                        variant.min_compute_capability % 10, "; this device is ", cc / 10, ".", cc % 10);
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  const int64_t footprint = TensorBytes(op, problem);
  if (static_cast<double>(footprint) > 0.9 * static_cast<double>(free_bytes))
    return absl::StrCat("needs ", footprint, " bytes of device memory; ", free_bytes, " free");
  return "";
}

void CudaMeasureDevice::AddResources(const kernels::Variant& variant, const kernels::Problem& problem,
                                     v1::Result* r) {
  if (!variant.launches) return;
  for (auto& kr : KernelResourcesOf(variant.launches(problem), backend_.ordinal_)) *r->add_resources() = std::move(kr);
}

absl::StatusOr<std::unique_ptr<DeviceRun>> CudaMeasureDevice::Allocate(const kernels::OpDef& op,
                                                                       const kernels::Variant& variant,
                                                                       const kernels::Problem& problem,
                                                                       const HostTensors&) {
  CudaHandles handles{.stream = backend_.stream_,
                      .start = backend_.start_,
                      .mid = backend_.mid_,
                      .stop = backend_.stop_,
                      .flush_buffer = backend_.flush_buffer_,
                      .flush_bytes = backend_.flush_bytes_,
                      .write_back_buffer = backend_.write_back_buffer_,
                      .write_back_bytes = backend_.write_back_bytes_,
                      .uuid = backend_.device_.uuid(),
                      .fail = [this](cudaError_t e, const char* what) { return backend_.Fail(e, what); }};
  auto run = std::make_unique<CudaRun>(std::move(handles), op, variant, problem);
  if (cudaError_t e = run->allocation_error(); e != cudaSuccess)
    return absl::ResourceExhaustedError(backend_.Fail(e, "cudaMalloc"));
  return run;
}

}  // namespace kbench::worker
