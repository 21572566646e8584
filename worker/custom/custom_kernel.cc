#include "worker/custom/custom_kernel.h"

#include <cuda_runtime.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/grid_expr.h"
#include "worker/custom/compile_log.h"
#include "worker/custom/contract.h"
#include "worker/custom/driver_api.h"
#include "worker/custom/ptx_signature.h"

namespace kbench::worker {

absl::StatusOr<std::unique_ptr<LoadedKernel>> LoadedKernel::Load(const KernelImage& image,
                                                                  const v1::LaunchContract& contract) {
  absl::StatusOr<const DriverApi*> api = GetDriverApi();
  if (!api.ok()) return api.status();
  const DriverApi& cu = **api;
  CUcontext ctx = nullptr;
  if (cu.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
    // The runtime creates the primary context lazily; make it current for the driver calls below.
    cudaFree(nullptr);
    if (cu.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr)
      return absl::UnavailableError("custom kernel: no current CUDA context");
  }
  std::unique_ptr<LoadedKernel> k(new LoadedKernel());
  k->api_ = &cu;
  k->entry_ = image.entry;
  std::string error_log(kMaxCompileLogBytes, '\0');  // the JIT's log is capped like NVRTC's
  std::string info_log(4 * 1024, '\0');
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(error_log.size()), info_log.data(),
                    reinterpret_cast<void*>(info_log.size())};
  // PTX must be NUL-terminated for the JIT.
  const std::string data = image.kind == v1::PTX ? image.bytes + '\0' : image.bytes;
  if (CUresult r = cu.module_load_data_ex(&k->module_, data.data(), 4, opts, values); r != CUDA_SUCCESS) {
    error_log.resize(std::strlen(error_log.c_str()));
    return absl::InvalidArgumentError(absl::StrCat("the driver refused the ", image.kind == v1::PTX ? "PTX" : "cubin",
                                                   ": ", cu.ErrorText(r), error_log.empty() ? "" : "\n", error_log));
  }
  if (CUresult r = cu.module_get_function(&k->function_, k->module_, image.entry.c_str()); r != CUDA_SUCCESS)
    return absl::InvalidArgumentError(
        absl::StrCat("contract violation: no kernel '", image.entry, "' in the module (", cu.ErrorText(r), ")"));
  // The parameter sizes as the driver sees them (a cubin carries no PTX to read them from).
  std::vector<int> sizes;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (cu.func_get_param_info(k->function_, i, &offset, &size) != CUDA_SUCCESS) break;
    sizes.push_back(static_cast<int>(size));
  }
  if (absl::Status s = CheckParamSizes(sizes, contract, image.entry); !s.ok()) return s;
  return k;
}

LoadedKernel::~LoadedKernel() {
  if (module_) api_->module_unload(module_);
}

absl::Status LoadedKernel::AllowDynamicShared(int64_t bytes) const {
  if (bytes <= 48 * 1024) return absl::OkStatus();
  if (CUresult r = api_->func_set_attribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes));
      r != CUDA_SUCCESS)
    return absl::InvalidArgumentError(absl::StrCat(bytes, " bytes of dynamic shared memory: ", api_->ErrorText(r)));
  return absl::OkStatus();
}

v1::KernelResources FunctionResources(const DriverApi& api, CUfunction function, const std::string& name,
                                      int block_threads, int64_t dynamic_shared_bytes) {
  v1::KernelResources r;
  r.set_kernel_name(name);
  r.set_block_threads(block_threads);
  r.set_dynamic_shared_bytes(dynamic_shared_bytes);
  int v = 0;
  if (api.func_get_attribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, function) == CUDA_SUCCESS) r.set_registers_per_thread(v);
  if (api.func_get_attribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function) == CUDA_SUCCESS)
    r.set_static_shared_bytes(v);
  if (api.func_get_attribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function) == CUDA_SUCCESS)
    r.set_local_bytes_per_thread(v);
  int device = 0, blocks = 0, max_threads = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device) == cudaSuccess &&
      api.occupancy_max_active_blocks(&blocks, function, block_threads, static_cast<size_t>(dynamic_shared_bytes)) ==
          CUDA_SUCCESS &&
      max_threads > 0)
    r.set_theoretical_occupancy(static_cast<double>(blocks * ((block_threads + 31) / 32)) / (max_threads / 32));
  return r;
}

v1::KernelResources LoadedKernel::Resources(int block_threads, int64_t dynamic_shared_bytes) const {
  return FunctionResources(*api_, function_, entry_, block_threads, dynamic_shared_bytes);
}

absl::StatusOr<LaunchConfig> ResolveLaunch(const v1::CustomVariant& custom, const v1::LaunchContract& contract,
                                           const kernels::Problem& problem) {
  LaunchConfig c;
  const auto& block = custom.block().empty() ? contract.default_block() : custom.block();
  for (int i = 0; i < block.size() && i < 3; ++i) c.block[i] = block[i];
  const auto& grid = custom.grid().empty() ? contract.default_grid() : custom.grid();
  static constexpr const char* kBlockNames[] = {"block_x", "block_y", "block_z"};
  auto lookup = [&](absl::string_view name) -> std::optional<int64_t> {
    for (int i = 0; i < 3; ++i)
      if (name == kBlockNames[i]) return c.block[i];
    for (const auto& [dim, value] : problem.dims)
      if (dim == name) return value;
    return std::nullopt;
  };
  static constexpr int64_t kLimits[] = {(int64_t{1} << 31) - 1, 65535, 65535};
  for (int i = 0; i < grid.size() && i < 3; ++i) {
    absl::StatusOr<api::GridExpr> e = api::GridExpr::Parse(grid[i]);
    if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat("grid[", i, "]: ", e.status().message()));
    absl::StatusOr<int64_t> v = e->Evaluate(lookup);
    if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("grid[", i, "]: ", v.status().message()));
    if (*v < 0 || *v > kLimits[i])
      return absl::InvalidArgumentError(absl::StrCat("grid[", i, "] = ", grid[i], " is ", *v, " for ", problem.label(),
                                                     "; CUDA allows 0 (no launch) to ", kLimits[i]));
    c.grid[i] = *v;
  }
  c.dynamic_shared_bytes = custom.dynamic_shared_bytes();
  return c;
}

kernels::Variant MakeCustomVariant(const std::string& name, const LoadedKernel& kernel, const LaunchConfig& launch,
                                   kernels::Dtype dtype) {
  kernels::Variant v;
  v.name = name;
  v.description = "custom kernel";
  v.backend = kernels::Backend::kCuda;
  v.dtypes = {dtype};
  const CUfunction f = kernel.function();
  const DriverApi* cu = kernel.api();
  v.run_cuda = [f, cu, launch](const kernels::Problem& p, std::span<const kernels::Tensor> tensors, void* stream) -> int {
    if (launch.grid[0] == 0 || launch.grid[1] == 0 || launch.grid[2] == 0) return 0;  // an empty problem
    // The contract's arguments: every tensor's pointer, then every dim, each 8 bytes.
    std::vector<uint64_t> values;
    values.reserve(tensors.size() + p.dims.size());
    for (const kernels::Tensor& t : tensors) values.push_back(reinterpret_cast<uint64_t>(t.data));
    for (const auto& [name, value] : p.dims) values.push_back(static_cast<uint64_t>(value));
    std::vector<void*> args;
    args.reserve(values.size());
    for (uint64_t& value : values) args.push_back(&value);
    const CUresult r = cu->launch_kernel(f, static_cast<unsigned>(launch.grid[0]), static_cast<unsigned>(launch.grid[1]),
                                      static_cast<unsigned>(launch.grid[2]), launch.block[0], launch.block[1],
                                      launch.block[2], static_cast<unsigned>(launch.dynamic_shared_bytes),
                                      static_cast<CUstream>(stream), args.data(), nullptr);
    // The runtime's error codes share the driver's numbers for launch errors (invalid value 1,
    // out of resources 701, illegal address 700, launch failed 719).
    return static_cast<int>(r);
  };
  return v;
}

}  // namespace kbench::worker
