// Test-only CUDA variants that fault or hang on purpose (see broken_kernels.h).
#include "broken_kernels.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kbench::kernels::testing {
namespace {

constexpr int kBlock = 256;

template <typename T>
__device__ float Widen(T v) {
  return static_cast<float>(v);
}

// Correct elementwise work, then a store far outside any allocation.
template <typename T>
__global__ void OutOfBoundsWrite(const T* x, const T* y, T* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<T>(Widen(x[i]) + Widen(y[i]));
  if (i == 0) {
    // 1 TiB past the output: unmapped, so the store faults (an illegal address, reported at the sync).
    auto* far = reinterpret_cast<volatile float*>(reinterpret_cast<uintptr_t>(out) + (uintptr_t{1} << 40));
    *far = 1.0f;
  }
}

// Nothing ever sets it; volatile, so the spin below is a real load each time and not undefined
// behaviour (a side-effect-free infinite loop could be removed by the compiler).
__device__ volatile int g_release = 0;

template <typename T>
__global__ void Hang(const T*, const T*, T*, int64_t) {
  while (g_release == 0) __nanosleep(1000000);
}

int RunOob(const Problem& p, std::span<const Tensor> t, void* stream) {
  const int64_t n = std::max<int64_t>(p.dim("N"), 1);
  const unsigned grid = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  auto s = static_cast<cudaStream_t>(stream);
  if (p.dtype == Dtype::kBF16) {
    OutOfBoundsWrite<__nv_bfloat16><<<grid, kBlock, 0, s>>>(static_cast<const __nv_bfloat16*>(t[0].data),
                                                            static_cast<const __nv_bfloat16*>(t[1].data),
                                                            static_cast<__nv_bfloat16*>(t[2].data), p.dim("N"));
  } else {
    OutOfBoundsWrite<float><<<grid, kBlock, 0, s>>>(static_cast<const float*>(t[0].data),
                                                    static_cast<const float*>(t[1].data),
                                                    static_cast<float*>(t[2].data), p.dim("N"));
  }
  return static_cast<int>(cudaGetLastError());
}

int RunHang(const Problem& p, std::span<const Tensor> t, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (p.dtype == Dtype::kBF16) {
    Hang<__nv_bfloat16><<<1, 32, 0, s>>>(static_cast<const __nv_bfloat16*>(t[0].data),
                                         static_cast<const __nv_bfloat16*>(t[1].data),
                                         static_cast<__nv_bfloat16*>(t[2].data), p.dim("N"));
  } else {
    Hang<float><<<1, 32, 0, s>>>(static_cast<const float*>(t[0].data), static_cast<const float*>(t[1].data),
                                 static_cast<float*>(t[2].data), p.dim("N"));
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

std::vector<Variant> BrokenCudaVariants() {
  const auto no_skip = [](const Problem&) { return std::string(); };
  return {
      {
          .name = "cuda_broken_oob_write",
          .description = "TEST ONLY: writes out correctly, then stores 1 TiB past it: an illegal address.",
          .backend = Backend::kCuda,
          .dtypes = {Dtype::kF32, Dtype::kBF16},
          .skip_reason = no_skip,
          .run_cuda = RunOob,
          .launches =
              [](const Problem& p) {
                return std::vector<LaunchInfo>{
                    {p.dtype == Dtype::kBF16 ? "OutOfBoundsWrite<bf16>" : "OutOfBoundsWrite<f32>",
                     p.dtype == Dtype::kBF16 ? (const void*)&OutOfBoundsWrite<__nv_bfloat16>
                                             : (const void*)&OutOfBoundsWrite<float>,
                     kBlock, 0}};
              },
      },
      {
          .name = "cuda_broken_hang",
          .description = "TEST ONLY: a kernel that never finishes (spins on a flag nothing sets).",
          .backend = Backend::kCuda,
          .dtypes = {Dtype::kF32, Dtype::kBF16},
          .skip_reason = no_skip,
          .run_cuda = RunHang,
          .launches =
              [](const Problem& p) {
                return std::vector<LaunchInfo>{{p.dtype == Dtype::kBF16 ? "Hang<bf16>" : "Hang<f32>",
                                                p.dtype == Dtype::kBF16 ? (const void*)&Hang<__nv_bfloat16>
                                                                        : (const void*)&Hang<float>,
                                                32, 0}};
              },
      },
  };
}

}  // namespace kbench::kernels::testing
