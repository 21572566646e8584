// Loading and launching a Triton cubin; see triton_kernel.h.
#include "worker/triton/triton_kernel.h"

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/custom/custom_kernel.h"

namespace kbench::worker {

absl::StatusOr<std::unique_ptr<TritonKernel>> TritonKernel::Load(const TritonKernelImage& image, int contract_params) {
  absl::StatusOr<const DriverApi*> api = GetDriverApi();
  if (!api.ok()) return api.status();
  const DriverApi& cu = **api;
  CUcontext ctx = nullptr;
  if (cu.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
    cudaFree(nullptr);  // the runtime's primary context, made current for the driver calls
    if (cu.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr)
      return absl::UnavailableError("Triton kernel: no current CUDA context");
  }
  std::unique_ptr<TritonKernel> k(new TritonKernel());
  k->api_ = &cu;
  k->name_ = image.name;
  k->threads_ = 32 * image.num_warps;
  k->shared_ = image.shared_bytes;
  k->scratch_size_[0] = image.global_scratch_size, k->scratch_align_[0] = image.global_scratch_align;
  k->scratch_size_[1] = image.profile_scratch_size, k->scratch_align_[1] = image.profile_scratch_align;
  if (CUresult r = cu.module_load_data_ex(&k->module_, image.cubin.data(), 0, nullptr, nullptr); r != CUDA_SUCCESS)
    return absl::InvalidArgumentError(absl::StrCat("the driver refused Triton's cubin: ", cu.ErrorText(r)));
  if (CUresult r = cu.module_get_function(&k->function_, k->module_, image.name.c_str()); r != CUDA_SUCCESS)
    return absl::InvalidArgumentError(absl::StrCat("no kernel '", image.name, "' in Triton's cubin (", cu.ErrorText(r), ")"));
  int params = 0;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (cu.func_get_param_info(k->function_, i, &offset, &size) != CUDA_SUCCESS) break;
    // The contract's parameters and Triton's scratch pointers are all 8 bytes.
    if (size != 8)
      return absl::InvalidArgumentError(absl::StrCat("parameter ", i, " of Triton kernel '", image.name, "' is ", size,
                                                     " bytes; the launch contract passes 8-byte pointers and int64 dims"));
    ++params;
  }
  k->extra_params_ = params - contract_params;
  if (k->extra_params_ < 0 || k->extra_params_ > 2)
    return absl::InvalidArgumentError(absl::StrCat("Triton kernel '", image.name, "' takes ", params,
                                                   " parameters; the launch contract passes ", contract_params,
                                                   " (plus at most 2 scratch pointers of Triton's own)"));
  if (k->shared_ > 48 * 1024) {
    if (CUresult r = cu.func_set_attribute(k->function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(k->shared_));
        r != CUDA_SUCCESS)
      return absl::InvalidArgumentError(absl::StrCat("Triton kernel '", image.name, "' needs ", k->shared_,
                                                     " bytes of shared memory: ", cu.ErrorText(r)));
  }
  return k;
}

TritonKernel::~TritonKernel() {
  if (module_) api_->module_unload(module_);
}

v1::KernelResources TritonKernel::Resources() const {
  return FunctionResources(*api_, function_, name_, threads_, shared_);
}

namespace {

// Triton's scratch buffers for one grid, freed with the variant that holds them.
struct Scratch {
  void* ptr[2] = {nullptr, nullptr};
  ~Scratch() {
    for (void* p : ptr)
      if (p) cudaFree(p);
  }
};

}  // namespace

kernels::Variant MakeTritonVariant(const std::string& name, const TritonKernel& kernel, const ResolvedTritonLaunch& launch,
                                   kernels::Dtype dtype) {
  kernels::Variant v;
  v.name = name;
  v.description = "Triton kernel";
  v.backend = kernels::Backend::kCuda;
  v.dtypes = {dtype};
  auto scratch = std::make_shared<Scratch>();
  const int64_t programs = launch.grid[0] * launch.grid[1] * launch.grid[2];
  int alloc_error = 0;
  for (int i = 0; i < kernel.extra_params_ && i < 2; ++i) {
    const int64_t bytes = kernel.scratch_size_[i] * programs;
    if (bytes > 0 && alloc_error == 0)
      alloc_error = static_cast<int>(cudaMalloc(&scratch->ptr[i], static_cast<size_t>(bytes)));  // 256-aligned
  }
  const CUfunction f = kernel.function_;
  const DriverApi* cu = kernel.api_;
  const int extra = kernel.extra_params_;
  const unsigned threads = static_cast<unsigned>(kernel.threads_);
  const unsigned shared = static_cast<unsigned>(kernel.shared_);
  v.run_cuda = [f, cu, launch, scratch, extra, threads, shared, alloc_error](
                   const kernels::Problem& p, std::span<const kernels::Tensor> tensors, void* stream) -> int {
    if (alloc_error != 0) return alloc_error;
    if (launch.grid[0] == 0 || launch.grid[1] == 0 || launch.grid[2] == 0) return 0;  // an empty problem
    std::vector<uint64_t> values;
    values.reserve(tensors.size() + p.dims.size() + 2);
    for (const kernels::Tensor& t : tensors) values.push_back(reinterpret_cast<uint64_t>(t.data));
    for (const auto& [dim, value] : p.dims) values.push_back(static_cast<uint64_t>(value));
    for (int i = 0; i < extra; ++i) values.push_back(reinterpret_cast<uint64_t>(scratch->ptr[i]));
    std::vector<void*> args;
    args.reserve(values.size());
    for (uint64_t& value : values) args.push_back(&value);
    const CUresult r = cu->launch_kernel(f, static_cast<unsigned>(launch.grid[0]), static_cast<unsigned>(launch.grid[1]),
                                         static_cast<unsigned>(launch.grid[2]), threads, 1, 1, shared,
                                         static_cast<CUstream>(stream), args.data(), nullptr);
    return static_cast<int>(r);  // the runtime shares the driver's numbers for launch errors
  };
  return v;
}

}  // namespace kbench::worker
