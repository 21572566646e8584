// TMA tensor maps on the host: cuTensorMapEncodeTiled fetched once from the driver the CUDA runtime
// already loaded (no link against libcuda), and a 2D row-major encoding most rungs need. Shared by
// every TMA rung (the wgmma GEMM, FP8 GEMM, FlashAttention and w4a16 kernels).
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (types only; the function comes from the entry point)
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

namespace kbench::kernels::cuda {

using EncodeTiledFn = PFN_cuTensorMapEncodeTiled_v12000;

// cuTensorMapEncodeTiled, or null where the driver lacks it.
inline EncodeTiledFn EncodeTiled() {
  static EncodeTiledFn fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
#else
    const cudaError_t e = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &found);
#endif
    if (e == cudaSuccess && found == cudaDriverEntryPointSuccess) fn = reinterpret_cast<EncodeTiledFn>(p);
    cudaGetLastError();
  });
  return fn;
}

// A row-major rows x cols tensor of `elem`-byte elements (row stride cols * elem, a multiple of 16),
// boxes of box_rows x box_cols, zeros outside the tensor. 0, or a cudaError_t as int.
inline int EncodeRowMajor2d(CUtensorMap* map, CUtensorMapDataType type, int elem, const void* data, uint64_t rows,
                            uint64_t cols, uint32_t box_rows, uint32_t box_cols, CUtensorMapSwizzle swizzle) {
  const EncodeTiledFn encode = EncodeTiled();
  if (encode == nullptr) return static_cast<int>(cudaErrorNotSupported);
  const cuuint64_t dims[2] = {cols, rows};  // innermost first
  const cuuint64_t strides[1] = {cols * elem};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode(map, type, 2, const_cast<void*>(data), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace kbench::kernels::cuda
