// Fuzz target: request validation (proto/api/validate.cc, custom_spec.cc, plugin_spec.cc), as the
// coordinator runs it on Submit. The input is a SubmitRequest in protobuf's wire format (what arrives on
// the gRPC port); what parses is validated, then resolved against three catalog ops (rmsnorm-like, with a
// launch contract, a "small" preset and a dim bound; gemm-like, without; w4a16-like, with derived dims,
// one of them divided by a dim that may be 0) and expanded into problems.
// Never a crash, a signed overflow (UBSan) or an error without a message; a resolved spec has its
// shapes named in the op's order, and each expanded problem fits the device memory it was checked for.
#include <algorithm>
#include <cstdint>
#include <string>

#include "api/custom_spec.h"
#include "api/plugin_spec.h"
#include "api/validate.h"
#include "google/protobuf/text_format.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/coordinator.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr int64_t kDeviceMemory = int64_t{80} << 30;

const char* const kOps[] = {
    R"pb(
      name: "rmsnorm" dims: "rows" dims: "cols" dtypes: DTYPE_F32 dtypes: DTYPE_BF16
      tensors { name: "x" dims: "rows" dims: "cols" }
      tensors { name: "weight" dims: "cols" fixed_dtype: DTYPE_F32 }
      tensors { name: "out" dims: "rows" dims: "cols" is_output: true }
      variants { name: "cpu_naive" backend: BACKEND_CPU dtypes: DTYPE_F32 }
      variants { name: "cuda_v1" backend: BACKEND_CUDA dtypes: DTYPE_F32 dtypes: DTYPE_BF16 }
      presets { name: "small" problems { dims { name: "rows" value: 64 } dims { name: "cols" value: 128 } } }
      presets { name: "llm" problems { dims { name: "rows" value: 8192 } dims { name: "cols" value: 4096 } dtype: DTYPE_BF16 } }
      flags: "inplace" max_dim_value: 1048576
      contract { entry: "kbench_rmsnorm" params { name: "x" size_bytes: 8 } default_grid: "rows" }
    )pb",
    R"pb(
      name: "gemm" dims: "M" dims: "N" dims: "K" dtypes: DTYPE_F32 dtypes: DTYPE_BF16 dtypes: DTYPE_FP8_E4M3
      tensors { name: "A" dims: "M" dims: "K" }
      tensors { name: "B" dims: "K" dims: "N" }
      tensors { name: "C" dims: "M" dims: "N" is_output: true }
      variants { name: "cublas" backend: BACKEND_CUDA is_baseline: true }
      presets { name: "square" problems { dims { name: "M" value: 4096 } dims { name: "N" value: 4096 } dims { name: "K" value: 4096 } } }
      flags: "transpose_b"
    )pb",
    R"pb(
      name: "w4a16_gemm" dims: "M" dims: "N" dims: "K" dims: "K_words" dims: "groups" dtypes: DTYPE_BF16
      tensors { name: "A" dims: "M" dims: "K" }
      tensors { name: "W" dims: "N" dims: "K_words" fixed_dtype: DTYPE_I32 }
      tensors { name: "scales" dims: "N" dims: "groups" }
      tensors { name: "C" dims: "M" dims: "N" is_output: true }
      variants { name: "cpu_naive" backend: BACKEND_CPU dtypes: DTYPE_BF16 }
      derived_dims { name: "K_words" expr: "K / 8" }
      derived_dims { name: "groups" expr: "cdiv(K, 128) + cdiv(N, M)" }
      zero_dims: "M"
    )pb",
};

const std::vector<kbench::v1::OpInfo>& Ops() {
  static const std::vector<kbench::v1::OpInfo> ops = [] {
    std::vector<kbench::v1::OpInfo> out;
    for (const char* text : kOps) {
      kbench::v1::OpInfo op;
      FUZZ_CHECK(google::protobuf::TextFormat::ParseFromString(text, &op));
      out.push_back(op);
    }
    return out;
  }();
  return ops;
}

void CheckError(const absl::Status& s) {
  FUZZ_CHECK(absl::IsInvalidArgument(s));
  FUZZ_CHECK(!s.message().empty());
}

void Resolve(const kbench::v1::OpInfo& op, kbench::v1::JobSpec spec) {
  const absl::Status s = kbench::api::ResolveAgainstOp(op, kDeviceMemory, &spec);
  if (!s.ok()) return CheckError(s);
  for (const auto& ps : spec.problems()) {
    if (ps.has_preset()) continue;
    FUZZ_CHECK(ps.shape().dims_size() == op.dims_size());
    for (int j = 0; j < op.dims_size(); ++j) {
      FUZZ_CHECK(ps.shape().dims(j).name() == op.dims(j));
      // Derived dims filled in; 0 only where the op allows it.
      const bool zero_ok = std::find(op.zero_dims().begin(), op.zero_dims().end(), op.dims(j)) != op.zero_dims().end();
      FUZZ_CHECK(ps.shape().dims(j).value() >= (zero_ok ? 0 : 1));
    }
  }
  for (const kbench::v1::Problem& p : kbench::api::ExpandProblems(op, spec)) {
    absl::StatusOr<int64_t> bytes = kbench::api::FootprintBytes(op, p);
    FUZZ_CHECK(bytes.ok() && *bytes <= kDeviceMemory);
  }
  (void)kbench::api::SelectVariants(op, spec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kbench::v1::SubmitRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;  // gRPC refuses it before us.
  const kbench::v1::JobSpec& spec = request.spec();
  const absl::Status s = kbench::api::ValidateSpecStructure(spec);
  if (!s.ok()) return CheckError(s), 0;
  (void)kbench::api::NeedsPluginPlanning(spec);
  (void)kbench::api::PluginHashes(spec);
  (void)kbench::api::AbRounds(spec.ab());
  for (const auto& c : spec.custom_variants()) (void)kbench::api::CustomVariantName(c);
  // The coordinator resolves against the op the spec names; an unknown op is refused before. Every
  // op is tried here, so that any spec reaches the resolution code.
  for (const kbench::v1::OpInfo& op : Ops()) Resolve(op, spec);
  return 0;
}
