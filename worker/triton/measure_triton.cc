// Measuring a Triton kernel in the runner; see measure_triton.h.
#include "worker/triton/measure_triton.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/sha256.h"
#include "worker/custom/contract.h"
#include "worker/runner/convert.h"

namespace kbench::worker {
namespace {

constexpr size_t kMaxLoadedModules = 64;
constexpr int kTuneWarmup = 2, kTuneLaunches = 5;

std::string Hash(const std::string& bytes) {
  api::Sha256 h;
  h.Update(bytes);
  return h.HexDigest();
}

// The median time of a few launches of `variant` on scratch tensors of the problem (zeros), for the
// autotune's choice only: the measurement proper is the pipeline's. -1 when a launch fails.
double TimeCandidate(const kernels::OpDef& op, const kernels::Variant& variant, const kernels::Problem& problem) {
  std::vector<kernels::Tensor> tensors;
  bool ok = true;
  for (const kernels::TensorSpec& spec : op.tensors) {
    kernels::Tensor t{.data = nullptr, .numel = spec.numel(problem), .dtype = spec.dtype(problem)};
    const size_t bytes = static_cast<size_t>(std::max<int64_t>(1, t.numel * kernels::DtypeBytes(t.dtype)));
    ok = ok && cudaMalloc(&t.data, bytes) == cudaSuccess && cudaMemset(t.data, 0, bytes) == cudaSuccess;
    tensors.push_back(t);
  }
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  ok = ok && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess &&
       cudaEventCreate(&begin) == cudaSuccess && cudaEventCreate(&end) == cudaSuccess;
  std::vector<float> ms;
  for (int i = 0; ok && i < kTuneWarmup + kTuneLaunches; ++i) {
    ok = cudaEventRecord(begin, stream) == cudaSuccess && variant.run_cuda(problem, tensors, stream) == 0 &&
         cudaEventRecord(end, stream) == cudaSuccess && cudaEventSynchronize(end) == cudaSuccess;
    float t = 0;
    if (ok && i >= kTuneWarmup && cudaEventElapsedTime(&t, begin, end) == cudaSuccess) ms.push_back(t);
  }
  if (end) cudaEventDestroy(end);
  if (begin) cudaEventDestroy(begin);
  if (stream) cudaStreamDestroy(stream);
  for (const kernels::Tensor& t : tensors)
    if (t.data) cudaFree(t.data);
  if (!ok || ms.empty()) return -1;
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2] * 1e6;
}

// The autotune's key: the kernel, the dtype, which dims are divisible by 16 (what Triton
// specializes on), the flags, and the constexprs the problem sets (attention's head dim and causal
// flag make other kernels with other best tiles), so one choice serves every problem of that class.
std::string ShapeClass(const TritonKernelSource& kernel, const kernels::Problem& problem,
                       const std::vector<std::pair<std::string, int64_t>>& constexprs) {
  std::string key = absl::StrCat(Hash(kernel.source), "/", kernels::DtypeName(problem.dtype), "/");
  for (const auto& [dim, value] : problem.dims) absl::StrAppend(&key, dim, value % 16 == 0 ? "16" : "1", ",");
  for (const std::string& flag : problem.flags) absl::StrAppend(&key, "/", flag);
  for (const auto& [name, value] : constexprs) absl::StrAppend(&key, "/", name, "=", value);
  return key;
}

}  // namespace

TritonRunner& TritonRunner::Get() {
  static TritonRunner* runner = new TritonRunner(KernelCache::DefaultDir());
  return *runner;
}

absl::StatusOr<const TritonKernel*> TritonRunner::LoadOnce(const TritonKernelImage& image, int contract_params) {
  const std::string key = absl::StrCat(Hash(image.cubin), "/", image.name);
  auto it = loaded_.find(key);
  if (it == loaded_.end()) {
    absl::StatusOr<std::unique_ptr<TritonKernel>> k = TritonKernel::Load(image, contract_params);
    if (!k.ok()) return k.status();
    if (loaded_.size() >= kMaxLoadedModules) loaded_.erase(loaded_.begin());
    it = loaded_.emplace(key, std::move(*k)).first;
  }
  return it->second.get();
}

v1::Result TritonRunner::Measure(Backend& backend, const kernels::OpDef& op, const TritonKernelSource& kernel,
                                 const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                 const CancelFlag& cancel, std::chrono::milliseconds compile_limit) {
  v1::Result r;
  r.set_op(op.name);
  r.set_variant(kernel.variant_name);
  *r.mutable_problem() = ToProtoProblem(problem);
  *r.mutable_device() = backend.device();
  v1::CustomKernelInfo info;
  info.set_kind(v1::TRITON_SOURCE);
  info.set_source_sha256(Hash(kernel.source));
  auto fail = [&](v1::ResultStatus status, std::string message) {
    r.set_status(status);
    r.set_status_message(std::move(message));
    *r.mutable_custom() = info;
    return r;
  };
  const v1::DeviceInfo device = backend.device();
  const int cc = device.compute_capability_major() * 10 + device.compute_capability_minor();
  info.set_arch(absl::StrCat("sm_", cc));
  TritonPrepared prepared =
      PrepareTriton(op, kernel, problem, {.compute_capability = cc, .cache = &cache_, .compile_limit = compile_limit});
  info.set_compiler(prepared.compiler);
  if (prepared.status != v1::OK) return fail(prepared.status, prepared.message);
  info.set_cache_hit(prepared.cache_hit);
  info.set_compile_ns(prepared.compile_ns);
  const int contract_params = static_cast<int>(op.tensors.size() + op.dims.size());

  std::vector<const TritonKernel*> kernels_loaded;
  for (const PreparedConfig& c : prepared.configs) {
    absl::StatusOr<const TritonKernel*> k = LoadOnce(c.image, contract_params);
    if (!k.ok())
      return fail(absl::IsUnavailable(k.status()) ? v1::RUNTIME_ERROR : v1::COMPILE_ERROR, std::string(k.status().message()));
    kernels_loaded.push_back(*k);
  }
  size_t chosen = 0;
  if (prepared.configs.size() > 1) {
    const std::string shape = ShapeClass(kernel, problem, prepared.configs[0].launch.constexprs);
    if (auto it = chosen_.find(shape); it != chosen_.end() && static_cast<size_t>(it->second) < prepared.configs.size()) {
      chosen = static_cast<size_t>(it->second);
    } else {
      double best = -1;
      for (size_t i = 0; i < prepared.configs.size(); ++i) {
        const kernels::Variant v =
            MakeTritonVariant(kernel.variant_name, *kernels_loaded[i], prepared.configs[i].launch, problem.dtype);
        const double ns = TimeCandidate(op, v, problem);
        info.add_triton_autotune(absl::StrCat(prepared.configs[i].label, ": ",
                                              ns < 0 ? "failed" : absl::StrCat(static_cast<int64_t>(ns), " ns")));
        if (ns >= 0 && (best < 0 || ns < best)) best = ns, chosen = i;
      }
      cudaGetLastError();  // a failed candidate's launch error is its own; the chosen one is measured below
      chosen_[shape] = static_cast<int>(chosen);
    }
  }
  const PreparedConfig& config = prepared.configs[chosen];
  const TritonKernel& k = *kernels_loaded[chosen];
  info.set_entry(config.image.name);
  info.set_triton_config(config.label);
  for (int64_t g : config.launch.grid) info.add_grid(g);
  info.add_block(static_cast<uint32_t>(k.block_threads()));
  info.add_block(1);
  info.add_block(1);
  info.set_dynamic_shared_bytes(k.shared_bytes());
  const kernels::Variant variant = MakeTritonVariant(kernel.variant_name, k, config.launch, problem.dtype);
  v1::Result measured = backend.MeasureOne(op, variant, problem, settings, cancel);
  *measured.mutable_custom() = info;
  *measured.add_resources() = k.Resources();
  if (backend.context_lost()) loaded_.clear();  // the modules died with the context; the runner exits
  return measured;
}

}  // namespace kbench::worker
