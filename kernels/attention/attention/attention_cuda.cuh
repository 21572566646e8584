// Shared pieces of the CUDA attention ladder (attention_*.cu): the problem as the launchers see it,
// the element types (bf16 and f16) and their conversions, the skip reasons every rung shares, and
// each file's registration function. AddAttentionCudaVariants (attention_reference.cu) calls those in
// ladder order and sets the op's device reference.
//
// The contract of every launcher: q [B,H,N_q,d], k and v [B,H_kv,N_kv,d], o [B,H,N_q,d], all
// contiguous (d innermost), lse [B,H,N_q] f32; query head h reads KV head h / (H / H_kv); the causal
// mask keeps keys j <= i + N_kv - N_q (attention_ref.h). Tensors from the worker are 256-byte aligned.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>

#include "attention/attention/attention_ref.h"
#include "core/cuda/cuda_check.cuh"
#include "core/op.h"

namespace kbench::kernels::attention {

struct AttnArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  AttentionShape s;
  Dtype dtype = Dtype::kUnspecified;
};

inline AttnArgs ArgsOf(const Problem& p, std::span<const Tensor> t) {
  return AttnArgs{t[0].data, t[1].data, t[2].data, t[3].data, static_cast<float*>(t[4].data), ShapeOf(p), p.dtype};
}

__device__ __forceinline__ float ToF(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ToF(__half v) { return __half2float(v); }
template <typename T>
__device__ __forceinline__ T FromF(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __half FromF<__half>(float v) { return __float2half_rn(v); }

// Calls f(T{}) with T = __nv_bfloat16 or __half for the problem's dtype; any other dtype is
// cudaErrorInvalidValue (the rungs declare only these two).
template <typename F>
int DispatchHalf(Dtype d, F&& f) {
  switch (d) {
    case Dtype::kBF16: return f(__nv_bfloat16{});
    case Dtype::kF16: return f(__half{});
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <typename T>
inline const char* TypeName() {
  return std::is_same_v<T, __half> ? "f16" : "bf16";
}

// The rungs index rows with 32-bit ints inside a head and grid dimensions with blockIdx.y/z.
inline std::string SizeSkip(const AttentionShape& s) {
  if (s.n_q * s.d > INT_MAX || s.n_kv * s.d > INT_MAX) return "N * d exceeds 2^31-1 (32-bit indexing inside a head)";
  if (s.b * s.h > 65535) return "B * H = " + std::to_string(s.b * s.h) + " exceeds gridDim.y's 65535";
  return "";
}

// "" when the rung has code for head dimension d; otherwise the reason.
inline std::string HeadDimSkip(const AttentionShape& s, std::initializer_list<int> supported) {
  std::string names;
  for (int d : supported) {
    if (d == s.d) return "";
    names += (names.empty() ? "" : ", ") + std::to_string(d);
  }
  return "this rung is written for d = " + names + " only, not d = " + std::to_string(s.d);
}

// Registration of each file's rungs (ladder order is AddAttentionCudaVariants').
void AddAttentionNaiveVariant(OpDef& op);      // attention_naive.cu: cuda_v1_naive
void AddAttentionFlashSimtVariant(OpDef& op);  // attention_flash_simt.cu: cuda_v2_flash_simt
void AddAttentionFlashMmaVariant(OpDef& op);   // attention_flash_mma.cu: cuda_v3_flash_mma
void AddAttentionFlashWgmmaVariant(OpDef& op); // attention_flash_wgmma.cu: cuda_v4_flash_wgmma (sm_90a)

// cuda_v2_flash_simt's launch (attention_flash_simt.cu): plain loads, so any element alignment. The
// rungs whose cp.async, ldmatrix or TMA need 16-byte aligned tensors run it on an offset view (the
// tests' unaligned trials; the harness's cudaMalloc'd tensors are always aligned), as the GEMM's
// wgmma rung hands such views to mma.sync: a refusal code would read as a lost CUDA context.
int RunAttentionFlashSimt(const Problem& p, std::span<const Tensor> t, void* stream);

// The device reference (attention_reference.cu): a warp per query row, f32 accumulation, outputs
// widened to double.
int RunAttentionReferenceF32(const Problem& p, std::span<const Tensor> inputs, std::span<double* const> outputs,
                             void* stream);

}  // namespace kbench::kernels::attention
