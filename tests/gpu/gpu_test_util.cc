// Helpers of the GPU tests (see gpu_test_util.h).
#include "gpu_test_util.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "core/random.h"

namespace kbench::kernels::testing {
namespace {

constexpr size_t kGuardBytes = 256;   // before and after each tensor; keeps the start 256-aligned
constexpr unsigned char kPoison = 0xFF;  // 0xFFFFFFFF and 0xFFFF are NaN in f32 and bf16

// Errors after which the context is gone for the rest of the process.
bool IsFatal(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

// One tensor on the device: [guard][offset elements][numel elements][guard], all poisoned first.
struct DeviceTensor {
  void* base = nullptr;
  size_t total = 0;
  size_t start = 0;  // byte offset of element 0
  size_t bytes = 0;  // numel * element size
  Tensor tensor;
};

struct DeviceTensors {
  std::vector<DeviceTensor> items;
  ~DeviceTensors() {
    for (auto& t : items)
      if (t.base) cudaFree(t.base);
  }
};

std::string Describe(const OpDef& op, const Variant& v, const Problem& p, const CheckOptions& o) {
  std::ostringstream s;
  s << op.name << " / " << v.name << " on " << p.label() << ", seed " << o.seed
    << (o.offset_elems ? ", pointers offset by " + std::to_string(o.offset_elems) + " element(s) (unaligned)" : "");
  return s.str();
}

}  // namespace

std::string CudaText(int code) {
  return std::string(cudaGetErrorName(static_cast<cudaError_t>(code))) + " (" +
         cudaGetErrorString(static_cast<cudaError_t>(code)) + ")";
}

std::string& FirstFatalError() {
  static std::string first;
  return first;
}

Tolerance ToleranceFor(const OpDef& op, const Problem& p) {
  if (op.problem_tolerance) return op.problem_tolerance(p);
  return op.tolerance ? op.tolerance(p.dtype) : Tolerance{};
}

std::vector<Problem> TestProblems(const OpDef& op) {
  std::vector<Problem> problems;
  for (const char* name : {"small", "edge"})
    if (const Preset* preset = op.find_preset(name))
      problems.insert(problems.end(), preset->problems.begin(), preset->problems.end());
  std::vector<std::vector<int64_t>> extra;
  if (op.dims == std::vector<std::string>{"rows", "cols"}) {
    // 20000: too wide for registers (re-read loops); 1000/1025: either side of the warp-per-row
    // bound of rmsnorm; 3001 and 4095: odd widths over 2048 (scalar paths, softmax's v3 fallback);
    // 4104: a multiple of 8 just over 4096. 2000x4096 and 5x8192: the fixed-geometry instantiations
    // of the pipelined rungs (4 packs a thread at 128 or 256 threads), 2000 rows being more than an
    // H100/H200 holds blocks, so blocks walk more than one row through their ring.
    extra = {{2, 20000}, {4, 1000}, {4, 1025}, {3, 3001}, {3, 4095}, {33, 4104}, {64, 1}, {2000, 4096}, {5, 8192}};
  } else if (op.dims == std::vector<std::string>{"N"}) {
    extra = {{(int64_t{1} << 20) + 5}, {33}, {8}};
  }
  for (const auto& dims : extra) problems.push_back(MakeProblem(op, dims));
  return problems;
}

std::vector<const Variant*> CudaVariants(const OpDef& op) {
  std::vector<const Variant*> out;
  for (const Variant& v : op.variants)
    if (v.backend == Backend::kCuda && v.triton_source.empty()) out.push_back(&v);
  return out;
}

CheckResult CheckCudaVariant(const OpDef& op, const Variant& v, const Problem& p, const CheckOptions& o) {
  CheckResult r;
  const std::string what = Describe(op, v, p, o);
  if (v.skip_reason) {
    r.skipped = v.skip_reason(p);
    if (!r.skipped.empty()) return r;
  }
  if (!FirstFatalError().empty()) {
    r.failure = what + ": not run, the CUDA context was lost earlier: " + FirstFatalError();
    return r;
  }
  const auto fail = [&](const std::string& msg) {
    r.failure = what + ": " + msg;
    return r;
  };
  const auto fatal_check = [&](cudaError_t e, const char* step) -> bool {
    if (e == cudaSuccess) return false;
    r.failure = what + ": " + step + " failed: " + CudaText(e);
    if (IsFatal(e) && FirstFatalError().empty()) FirstFatalError() = r.failure;
    return true;
  };

  // Host tensors: inputs filled as the worker fills them (seed, stream = input index, spec's range).
  std::vector<std::vector<unsigned char>> host(op.tensors.size());
  std::vector<Tensor> host_tensors(op.tensors.size());
  std::vector<Tensor> inputs;
  DeviceTensors dev;
  dev.items.resize(op.tensors.size());
  size_t input_index = 0;
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    const TensorSpec& spec = op.tensors[i];
    const Dtype d = spec.dtype(p);
    const int64_t numel = spec.numel(p);
    const size_t elem = static_cast<size_t>(DtypeBytes(d));
    host[i].assign(static_cast<size_t>(numel) * elem, 0);
    host_tensors[i] = Tensor{host[i].data(), numel, d};
    if (!spec.is_output) {
      FillInput(spec, p, host_tensors[i], o.seed, input_index++);
      inputs.push_back(host_tensors[i]);
    }
    DeviceTensor& t = dev.items[i];
    t.bytes = static_cast<size_t>(numel) * elem;
    t.start = kGuardBytes + static_cast<size_t>(o.offset_elems) * elem;
    t.total = t.start + t.bytes + kGuardBytes;
    if (fatal_check(cudaMalloc(&t.base, t.total), "cudaMalloc")) return r;
    if (fatal_check(cudaMemset(t.base, kPoison, t.total), "cudaMemset (poison)")) return r;
    t.tensor = Tensor{static_cast<unsigned char*>(t.base) + t.start, numel, d};
    if (!spec.is_output && t.bytes > 0 &&
        fatal_check(cudaMemcpy(t.tensor.data, host[i].data(), t.bytes, cudaMemcpyHostToDevice), "cudaMemcpy (inputs)"))
      return r;
  }
  std::vector<Tensor> device_tensors;
  for (const auto& t : dev.items) device_tensors.push_back(t.tensor);
  // The poison memsets (and the uploads' last DMA) are queued on the legacy stream, which a
  // non-blocking stream does not wait for: without this a small kernel can finish before an
  // output's poison lands on top of what it wrote.
  if (fatal_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (setup)")) return r;

  cudaStream_t stream = nullptr;
  if (fatal_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) return r;
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } stream_guard{stream};

  // Runs the variant and returns the outputs' bytes.
  const auto run_once = [&](std::vector<std::vector<unsigned char>>* outs) -> bool {
    const int rc = v.run_cuda(p, device_tensors, stream);
    if (rc != 0) {
      fail("run_cuda returned " + CudaText(rc));
      if (IsFatal(static_cast<cudaError_t>(rc)) && FirstFatalError().empty()) FirstFatalError() = r.failure;
      return false;
    }
    if (fatal_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after run_cuda")) return false;
    if (fatal_check(cudaGetLastError(), "cudaGetLastError after run_cuda")) return false;
    outs->clear();
    for (size_t i = 0; i < op.tensors.size(); ++i) {
      if (!op.tensors[i].is_output) continue;
      outs->emplace_back(dev.items[i].bytes);
      if (dev.items[i].bytes > 0 &&
          fatal_check(cudaMemcpy(outs->back().data(), dev.items[i].tensor.data, dev.items[i].bytes, cudaMemcpyDeviceToHost),
                      "cudaMemcpy (outputs)"))
        return false;
    }
    return true;
  };

  std::vector<std::vector<unsigned char>> outs;
  if (!run_once(&outs)) return r;
  r.ran = true;

  // Outputs against the reference.
  std::vector<std::vector<double>> expected;
  op.reference(p, inputs, expected);
  const Tolerance tol = ToleranceFor(op, p);
  std::ostringstream report;
  size_t k = 0;
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    if (!op.tensors[i].is_output) continue;
    const TensorSpec& spec = op.tensors[i];
    std::memcpy(host[i].data(), outs[k].data(), outs[k].size());
    std::vector<double> actual(static_cast<size_t>(host_tensors[i].numel));
    for (int64_t e = 0; e < host_tensors[i].numel; ++e) actual[e] = LoadAsDouble(host[i].data(), host_tensors[i].dtype, e);
    if (k >= expected.size()) return fail("the reference produced fewer outputs than the op declares");
    const CompareResult c = Compare(actual, expected[k], tol, host_tensors[i].dtype);
    Merge(r.compare, c);
    if (!c.passed) {
      report << "\n  output '" << spec.name << "' (" << actual.size() << " elements): " << c.mismatches
             << " mismatches, " << c.non_finite << " NaN/inf (an unwritten element stays NaN), max abs error "
             << c.max_abs_error << ", max rel error " << c.max_rel_error << ", rel L2 " << c.rel_l2_error
             << "; rtol " << tol.rtol << ", atol " << tol.atol;
      if (c.first_mismatch >= 0 && c.first_mismatch < static_cast<int64_t>(actual.size())) {
        const int64_t e = c.first_mismatch;
        report << "; first mismatch at index " << e;
        if (spec.dims.size() == 2) {
          const int64_t cols = p.dim(spec.dims[1]);
          if (cols > 0) report << " (row " << e / cols << ", col " << e % cols << ")";
        }
        report << ": got " << actual[e] << ", expected " << expected[k][e];
      }
    }
    ++k;
  }

  // Guards (out-of-bounds writes) and inputs (writes into an input).
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    const DeviceTensor& t = dev.items[i];
    std::vector<unsigned char> all(t.total);
    if (fatal_check(cudaMemcpy(all.data(), t.base, t.total, cudaMemcpyDeviceToHost), "cudaMemcpy (guards)")) return r;
    size_t bad = 0, first_bad = 0;
    for (size_t b = 0; b < t.total; ++b) {
      if (b >= t.start && b < t.start + t.bytes) continue;
      if (all[b] != kPoison && bad++ == 0) first_bad = b;
    }
    if (bad)
      report << "\n  tensor '" << op.tensors[i].name << "': " << bad << " byte(s) written outside it (first at byte "
             << static_cast<long long>(first_bad) - static_cast<long long>(t.start) << " relative to its start)";
    if (!op.tensors[i].is_output && t.bytes > 0 && std::memcmp(all.data() + t.start, host[i].data(), t.bytes) != 0)
      report << "\n  input '" << op.tensors[i].name << "' was modified";
  }

  if (o.check_deterministic && report.str().empty()) {
    std::vector<std::vector<unsigned char>> again;
    for (size_t i = 0; i < op.tensors.size(); ++i) {
      const DeviceTensor& t = dev.items[i];
      if (op.tensors[i].is_output && fatal_check(cudaMemset(t.base, kPoison, t.total), "cudaMemset (re-poison)"))
        return r;
    }
    if (fatal_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (re-poison)")) return r;
    if (!run_once(&again)) return r;
    for (size_t j = 0; j < outs.size(); ++j)
      if (outs[j] != again[j]) report << "\n  a second run on the same inputs gave different bits (output " << j << ")";
  }

  if (!report.str().empty()) r.failure = what + ":" + report.str();
  return r;
}

}  // namespace kbench::kernels::testing
