#include "worker/cuda/cuda_backend.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "worker/cuda/cuda_measure.h"
#include "worker/cuda/datasheet.h"
#include "worker/cuda/device_query.h"
#include "worker/measure/pipeline.h"
#include "worker/triton/measure_triton.h"

namespace kbench::worker {
namespace {

bool IsSticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(int ordinal, CudaCalibrationOptions options) {
  auto info = QueryCudaDevice(ordinal);
  if (!info.ok()) return info.status();
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->ordinal_ = ordinal;
  b->calibration_options_ = options;
  b->device_ = *info;
  b->datasheet_ = LookupDatasheet(info->name(), info->multiprocessor_count(), info->memory_bytes());
  auto check = [](cudaError_t e, const char* what) -> absl::Status {
    if (e == cudaSuccess) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat(what, ": ", cudaGetErrorString(e)));
  };
  if (auto s = check(cudaSetDevice(ordinal), "cudaSetDevice"); !s.ok()) return s;
  if (auto s = check(cudaStreamCreateWithFlags(&b->stream_, cudaStreamNonBlocking), "cudaStreamCreate"); !s.ok()) return s;
  if (auto s = check(cudaEventCreate(&b->start_), "cudaEventCreate"); !s.ok()) return s;
  if (auto s = check(cudaEventCreate(&b->stop_), "cudaEventCreate"); !s.ok()) return s;
  if (auto s = check(cudaEventCreate(&b->mid_), "cudaEventCreate"); !s.ok()) return s;
  // Twice the L2: whatever a sample reads was evicted by the flush (a cold sample, measure/harness.h).
  b->flush_bytes_ = std::max<size_t>(2 * static_cast<size_t>(info->l2_cache_bytes()), 8u << 20);
  if (auto s = check(cudaMalloc(&b->flush_buffer_, b->flush_bytes_), "cudaMalloc(flush)"); !s.ok()) return s;
  // One L2 read after a COLD launch, inside the window: the launch's dirty lines are written back
  // there (worker/README.md, "What a COLD sample contains").
  b->write_back_bytes_ = std::max<size_t>(static_cast<size_t>(info->l2_cache_bytes()), 4u << 20);
  if (auto s = check(cudaMalloc(&b->write_back_buffer_, b->write_back_bytes_), "cudaMalloc(write-back)"); !s.ok())
    return s;
  return b;
}

CudaBackend::~CudaBackend() {
  if (flush_buffer_) cudaFree(flush_buffer_);
  if (write_back_buffer_) cudaFree(write_back_buffer_);
  if (mid_) cudaEventDestroy(mid_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

absl::StatusOr<v1::Calibration> CudaBackend::Calibrate() { return CalibrateCuda(device_, calibration_options_); }

std::string CudaBackend::Fail(cudaError_t e, const char* what) {
  cudaGetLastError();  // clears a non-sticky error; a sticky one stays and shows here again
  if (IsSticky(e) || cudaDeviceSynchronize() != cudaSuccess) context_lost_ = true;
  return absl::StrCat(what, ": ", cudaGetErrorName(e), ": ", cudaGetErrorString(e));
}

v1::Result CudaBackend::MeasureOne(const kernels::OpDef& op, const kernels::Variant& variant,
                                   const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                   const CancelFlag& cancel) {
  // A Triton rung is compiled, loaded and measured as a concrete variant (worker/triton/).
  if (IsTritonRung(variant))
    return TritonRunner::Get().Measure(*this, op, {variant.triton_source, variant.name + ".py", variant.name}, problem,
                                       settings, cancel);
  v1::Result r = NewResult(*this, op, variant, problem);
  CudaMeasureDevice cuda(*this);
  MeasureInto(*this, cuda, op, variant, problem, settings, cancel, &r);
  return r;
}

}  // namespace kbench::worker
