#include "api/names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/quote.h"
#include "absl/strings/str_join.h"

namespace kbench::api {

std::string DtypeName(v1::Dtype d) {
  switch (d) {
    case v1::DTYPE_F32: return "f32";
    case v1::DTYPE_BF16: return "bf16";
    case v1::DTYPE_F16: return "f16";
    case v1::DTYPE_TF32: return "tf32";
    case v1::DTYPE_FP8_E4M3: return "fp8_e4m3";
    case v1::DTYPE_I32: return "i32";
    case v1::DTYPE_U8: return "u8";
    default: return "unspecified";
  }
}

absl::StatusOr<v1::Dtype> ParseDtype(absl::string_view name) {
  std::string n = absl::AsciiStrToLower(name);
  if (n == "f32" || n == "fp32" || n == "float32") return v1::DTYPE_F32;
  if (n == "bf16" || n == "bfloat16") return v1::DTYPE_BF16;
  if (n == "f16" || n == "fp16" || n == "float16") return v1::DTYPE_F16;
  if (n == "tf32") return v1::DTYPE_TF32;
  if (n == "fp8_e4m3" || n == "fp8" || n == "e4m3") return v1::DTYPE_FP8_E4M3;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype ", Quote(name), " (known: f32, bf16, f16, tf32, fp8_e4m3)"));
}

std::string StatusName(v1::ResultStatus s) {
  if (s == v1::RESULT_STATUS_UNSPECIFIED) return "UNSPECIFIED";
  return v1::ResultStatus_Name(s);
}

std::string JobStateName(v1::JobState s) {
  if (s == v1::CANCELLED_JOB) return "CANCELLED";
  if (s == v1::JOB_STATE_UNSPECIFIED) return "UNSPECIFIED";
  return v1::JobState_Name(s);
}

std::string BackendName(v1::Backend b) {
  switch (b) {
    case v1::BACKEND_CPU: return "cpu";
    case v1::BACKEND_CUDA: return "cuda";
    default: return "any";
  }
}

absl::StatusOr<v1::Backend> ParseBackend(absl::string_view name) {
  std::string n = absl::AsciiStrToLower(name);
  if (n == "cpu") return v1::BACKEND_CPU;
  if (n == "cuda" || n == "gpu") return v1::BACKEND_CUDA;
  if (n == "any" || n.empty()) return v1::BACKEND_UNSPECIFIED;
  return absl::InvalidArgumentError(absl::StrCat("unknown backend ", Quote(name), " (known: cpu, cuda, any)"));
}

std::string BoundClassName(v1::BoundClass c) {
  switch (c) {
    case v1::MEMORY_BOUND: return "memory";
    case v1::COMPUTE_BOUND: return "compute";
    case v1::LATENCY_BOUND: return "latency";
    default: return "-";
  }
}

std::string CacheModeName(v1::CacheMode m) { return m == v1::HOT ? "hot" : "cold"; }

absl::StatusOr<v1::CacheMode> ParseCacheMode(absl::string_view name) {
  std::string n = absl::AsciiStrToLower(name);
  if (n == "cold") return v1::COLD;
  if (n == "hot") return v1::HOT;
  return absl::InvalidArgumentError(absl::StrCat("unknown cache mode ", Quote(name), " (known: cold, hot)"));
}

std::string StopReasonName(v1::StopReason r) {
  switch (r) {
    case v1::NOISE_TARGET: return "noise";
    case v1::TIME_LIMIT: return "time";
    case v1::MAX_SAMPLES: return "samples";
    default: return "-";
  }
}

std::string ShapeLabel(const v1::Problem& p) {
  return absl::StrJoin(p.dims(), "x", [](std::string* out, const v1::Dim& d) {
    absl::StrAppend(out, d.value());
  });
}

std::string ShapeArgument(const v1::Problem& p) {
  std::string s = ShapeLabel(p);
  for (const auto& f : p.flags()) absl::StrAppend(&s, ",", f);
  return s;
}

std::string ProblemLabel(const v1::Problem& p) {
  std::string dims = absl::StrJoin(p.dims(), ",", [](std::string* out, const v1::Dim& d) {
    absl::StrAppend(out, d.name(), "=", d.value());
  });
  std::string s = absl::StrCat(dims, " ", DtypeName(p.dtype()));
  for (const auto& f : p.flags()) absl::StrAppend(&s, " ", f);
  return s;
}

}  // namespace kbench::api
