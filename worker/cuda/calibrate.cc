#include "worker/cuda/calibrate.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/calibration_cache.h"
#include "worker/calibration_check.h"
#include "worker/cuda/calibrate_streams.h"
#include "worker/cuda/calibrate_timer.h"
#include "worker/cuda/cuda_util.cuh"
#include "worker/cuda/nvml.h"

namespace kbench::worker {
namespace {

absl::StatusOr<double> CopyBandwidth(cudaStream_t stream, const v1::DeviceInfo& dev, bool quick, double* spread) {
  const size_t bytes = std::min<size_t>(quick ? (256u << 20) : (size_t{2} << 30), dev.memory_bytes() / 8);
  DeviceBuffer src, dst;
  KB_CUDA(cudaMalloc(&src.p, bytes));
  KB_CUDA(cudaMalloc(&dst.p, bytes));
  KB_CUDA(FillRandom(stream, src.p, bytes / 4, 0, 7));
  auto ms = MedianMs(stream, 3, quick ? 5 : 20, [&]() -> absl::Status {
    KB_CUDA(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice, stream));
    return absl::OkStatus();
  }, spread);
  if (!ms.ok()) return ms.status();
  return 2.0 * bytes / (*ms * 1e-3);
}

struct GemmType {
  const char* name;
  cudaDataType_t type;
  cublasComputeType_t compute;
  int fill_kind;  // for FillRandom
  size_t elem_bytes;
};

absl::StatusOr<double> CublasPeak(cudaStream_t stream, cublasHandle_t h, const GemmType& g, int n, bool quick) {
  DeviceBuffer a, b, c;
  const size_t count = size_t(n) * n;
  KB_CUDA(cudaMalloc(&a.p, count * g.elem_bytes));
  KB_CUDA(cudaMalloc(&b.p, count * g.elem_bytes));
  KB_CUDA(cudaMalloc(&c.p, count * g.elem_bytes));
  KB_CUDA(FillRandom(stream, a.p, count, g.fill_kind, 11));
  KB_CUDA(FillRandom(stream, b.p, count, g.fill_kind, 13));
  const float alpha = 1.0f, beta = 0.0f;
  auto ms = MedianMs(stream, 3, quick ? 3 : 10, [&]() -> absl::Status {
    KB_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.p, g.type, n, b.p, g.type, n, &beta, c.p,
                         g.type, n, g.compute, CUBLAS_GEMM_DEFAULT));
    return absl::OkStatus();
  });
  if (!ms.ok()) return ms.status();
  return 2.0 * n * double(n) * n / (*ms * 1e-3);
}

// FP8 E4M3 through cuBLASLt: A transposed (the TN layout FP8 requires), bf16 output, fp32 compute,
// fast accumulation: the tensor cores' own accumulation, no promotion of partial sums to fp32
// registers. A promoting GEMM (FAST_ACCUM off: cuBLASLt's default, kbench's FP8 rungs) does that work
// on top, so this is the higher of the two rates (2-10% higher on the H200 at 4096^3, 8192^3 and the
// fp8_gemm prefill shapes, torch._scaled_mm both ways in tests/gpu/qgemm_peers.py). Against the
// promoting kernel's rate the fp8_gemm rung, which runs at 100-104% of it, would read over 100%.
absl::StatusOr<double> LtFp8Peak(cudaStream_t stream, int n, bool quick) {
  cublasLtHandle_t lt;
  KB_BLAS(cublasLtCreate(&lt));
  DeviceBuffer a, b, d, ws;
  const size_t count = size_t(n) * n, ws_bytes = 64u << 20;
  KB_CUDA(cudaMalloc(&a.p, count));
  KB_CUDA(cudaMalloc(&b.p, count));
  KB_CUDA(cudaMalloc(&d.p, count * 2));
  KB_CUDA(cudaMalloc(&ws.p, ws_bytes));
  KB_CUDA(FillRandom(stream, a.p, count, 3, 17));
  KB_CUDA(FillRandom(stream, b.p, count, 3, 19));
  cublasLtMatmulDesc_t op;
  KB_BLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  KB_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  KB_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const int8_t fast_accum = 1;
  KB_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum));
  cublasLtMatrixLayout_t la, lb, ld;
  KB_BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n));
  KB_BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n));
  KB_BLAS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n));
  cublasLtMatmulPreference_t pref;
  KB_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  KB_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  KB_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found));
  if (found == 0) return absl::UnimplementedError("cuBLASLt found no FP8 algorithm");
  const float alpha = 1.0f, beta = 0.0f;
  auto ms = MedianMs(stream, 3, quick ? 3 : 10, [&]() -> absl::Status {
    KB_BLAS(cublasLtMatmul(lt, op, &alpha, a.p, la, b.p, lb, &beta, d.p, ld, d.p, ld, &heur.algo, ws.p, ws_bytes, stream));
    return absl::OkStatus();
  });
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  if (!ms.ok()) return ms.status();
  return 2.0 * n * double(n) * n / (*ms * 1e-3);
}

}  // namespace

absl::StatusOr<v1::Calibration> CalibrateCuda(const v1::DeviceInfo& device, const CudaCalibrationOptions& options) {
  KB_CUDA(cudaSetDevice(device.index()));
  cudaStream_t stream;
  KB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  v1::Calibration cal;
  cal.set_device_uuid(device.uuid());
  // Any kernel running before ours is someone else's: NVML's utilization over its last sample period.
  if (Nvml* nvml = Nvml::Get(); nvml != nullptr)
    if (std::optional<uint32_t> busy = nvml->UtilizationPercent(device.uuid())) cal.set_other_load_fraction(*busy / 100.0);
  double spread = 0;
  auto copy = CopyBandwidth(stream, device, options.quick, &spread);
  if (!copy.ok()) return copy.status();
  cal.set_copy_bytes_per_second(*copy);
  cal.set_copy_spread_fraction(spread);
  std::string streams_method;
  if (absl::Status s = MeasureStreams(stream, device, options.quick, &cal, &streams_method); !s.ok()) return s;

  cublasHandle_t h;
  KB_BLAS(cublasCreate(&h));
  KB_BLAS(cublasSetStream(h, stream));
  const int n = CeilingGemmSize(device.memory_bytes());
  const GemmType types[] = {
      {"f32", CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC, 0, 4},
      {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 0, 4},
      {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2},
      {"f16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2},
  };
  std::string method = absl::StrCat("cudaMemcpyAsync D2D, bytes read+written; cuBLAS GemmEx ", n, "^3");
  for (const GemmType& g : types) {
    // Plain fp32 runs on the SIMT units; 4096^3 is already far past their saturation point.
    const int size = std::string(g.name) == "f32" ? std::min(n, 4096) : n;
    auto peak = CublasPeak(stream, h, g, size, options.quick);
    if (!peak.ok()) return peak.status();
    (*cal.mutable_peak_flops_per_second())[g.name] = *peak;
  }
  cublasDestroy(h);
  if (device.compute_capability_major() * 10 + device.compute_capability_minor() >= 89) {
    auto fp8 = LtFp8Peak(stream, n, options.quick);
    if (fp8.ok()) {
      (*cal.mutable_peak_flops_per_second())["fp8_e4m3"] = *fp8;
      absl::StrAppend(&method, "; cuBLASLt fp8 e4m3 TN, fast accumulation");
    }
  }
  cudaStreamDestroy(stream);
  absl::StrAppend(&method, streams_method);
  cal.set_method(options.quick ? absl::StrCat(kQuickCalibrationPrefix, " ", method) : method);
  cal.set_measured_at_unix_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  return cal;
}

}  // namespace kbench::worker
