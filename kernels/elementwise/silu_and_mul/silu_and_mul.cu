// silu_and_mul on CUDA: out[r,c] = silu(x[r,0,c]) * x[r,1,c], bf16 storage, float arithmetic. 6 B
// moved an output element for ~5 FLOPs: memory-bound, so the rungs differ in how the bytes move.
//
// Rungs:
//   cuda_v1_plain  one thread an output element, 2-byte loads and stores: a warp moves 64 B of each
//                  half and 64 B of out an instruction, so many more instructions and fewer bytes in
//                  flight per thread than the bus needs.
//   cuda_v2_vec16  one thread 8 output elements: one 16-byte load from each half and one 16-byte
//                  store (512 B a warp an instruction), one trip a thread. d not a multiple of 8, or
//                  unaligned pointers, run v1's kernel.
// Both: the kernel of silu_and_mul_kernel.cuh, blockDim.x across a row's columns, blockIdx.y over rows.
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "elementwise/silu_and_mul/silu_and_mul.h"
#include "elementwise/silu_and_mul/silu_and_mul_kernel.cuh"

namespace kbench::kernels {
namespace {

using bf16 = __nv_bfloat16;

template <bool kVec>
int Run(const Problem& p, std::span<const Tensor> t, void* stream) {
  if (p.dtype != Dtype::kBF16) return static_cast<int>(cudaErrorInvalidValue);
  return cuda::LaunchSiluAndMul(static_cast<const bf16*>(t[0].data), static_cast<bf16*>(t[1].data), p.dim("rows"),
                                p.dim("d"), kVec, cuda::AsStream(stream));
}

template <bool kVec>
std::vector<LaunchInfo> Launches(const Problem& p) {
  using cuda::SiluAndMulKernel, cuda::kSiluAndMulBlock;
  if (kVec && p.dim("d") % 8 == 0) return {{"SiluAndMul<w8>", (const void*)&SiluAndMulKernel<8>, kSiluAndMulBlock, 0}};
  return {{"SiluAndMul<w1>", (const void*)&SiluAndMulKernel<1>, kSiluAndMulBlock, 0}};
}
std::string NoSkip(const Problem&) { return ""; }

}  // namespace

void AddSiluAndMulCudaVariants(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_v1_plain",
      .description = "One thread an output element, 2-byte accesses.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = NoSkip,
      .run_cuda = Run<false>,
      .launches = Launches<false>,
  });
  op.variants.push_back({
      .name = "cuda_v2_vec16",
      .description = "One thread 8 outputs: 16-byte loads of gate and up, a 16-byte store.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = NoSkip,
      .run_cuda = Run<true>,
      .launches = Launches<true>,
  });
}

}  // namespace kbench::kernels
