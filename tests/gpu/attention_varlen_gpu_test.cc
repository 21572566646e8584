// attention_varlen's CUDA rungs (kernels/attention/attention_varlen) on a GPU: the attention op's
// cuda_v3_flash_mma and cuda_v4_flash_wgmma kernels on packed variable-length batches.
//
//   AttentionVarlenGpuReference.MatchesCpuReference: the f32 device reference (used past 2 GFLOP)
//     against the fp64 CPU one on the small and edge presets, bf16 and f16: within 1e-4.
//   AttentionVarlenVariantTest.EdgeShapes (one test per rung): the small and edge presets (a
//     sequence of length 1, lengths off every tile, equal lengths, one sequence, cached prefixes,
//     a long first sequence, 40 sequences), bf16 and f16, seeds 1-3 against the fp64 CPU reference
//     with the op's tolerance; outputs and guard bands poisoned, inputs checked untouched
//     (gpu_test_util.h); seed 1 run twice for bitwise repeatability, seed 3 on unaligned views.
//   AttentionVarlenVariantTest.CiShape / SkewedShapes: the ci preset (two seeds, bf16 and f16) and
//     the skewed production mix (one 8k sequence among 31 of 512-1024, causal and not; one seed,
//     bf16), against the device reference with the same tolerance, aligned tensors.
//   AttentionVarlenVariantTest.UniformIsTheAttentionKernel: equal lengths packed give bitwise the
//     outputs of the attention op's same rung on the same values in its [B,H,N,d] layout.
//   AttentionVarlenLadder.Registration: the two rungs, their dtypes and launch descriptions.
// Skips (GTEST_SKIP) only where no GPU is visible; fails where one is but CUDA cannot use it.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention_varlen/attention_varlen.h"
#include "core/compare.h"
#include "core/random.h"
#include "core/registry.h"
#include "device_case.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

namespace av = attention_varlen;

const OpDef& Op(const char* name) {
  const OpDef* op = BuiltinRegistry().Find(name);
  if (op == nullptr) throw std::runtime_error(std::string(name) + " is not registered");
  return *op;
}
const OpDef& VarlenOp() { return Op("attention_varlen"); }

TEST(AttentionVarlenGpuReference, MatchesCpuReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = VarlenOp();
  ASSERT_TRUE(op.gpu_reference) << "the CUDA build sets attention_varlen's gpu_reference";
  for (Problem p : Presets(op, {"small", "edge"}))
    for (Dtype d : {Dtype::kBF16, Dtype::kF16}) {
      p.dtype = d;
      SCOPED_TRACE(p.label());
      DeviceCase c(op, p, 1);
      ASSERT_EQ(c.error, "");
      std::string error;
      const auto got = DeviceReference(op, p, c, &error);
      ASSERT_EQ(error, "");
      std::vector<Tensor> inputs;
      for (int i = 0; i < 5; ++i) inputs.push_back(Tensor{c.host[i].data(), c.tensors[i].numel, c.tensors[i].dtype});
      std::vector<std::vector<double>> want;
      op.reference(p, inputs, want);
      for (int out = 0; out < 2; ++out) {
        const CompareResult r = Compare(got[out], want[out], Tolerance{.rtol = 1e-5, .atol = 1e-4});
        EXPECT_TRUE(r.passed) << "output " << out << ": " << r.mismatches << " mismatches, max abs " << r.max_abs_error;
      }
    }
}

class AttentionVarlenVariantTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { KBENCH_REQUIRE_GPU_OR_SKIP(); }
  const Variant& variant() const { return *VarlenOp().find_variant(GetParam()); }
};

TEST_P(AttentionVarlenVariantTest, EdgeShapes) {
  const OpDef& op = VarlenOp();
  int ran = 0;
  for (Problem p : Presets(op, {"small", "edge"}))
    for (Dtype d : {Dtype::kBF16, Dtype::kF16}) {
      p.dtype = d;
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        const CheckResult r = CheckCudaVariant(
            op, variant(), p, CheckOptions{.seed = seed, .offset_elems = seed == 3 ? 1 : 0, .check_deterministic = seed == 1});
        ASSERT_EQ(r.skipped, "") << variant().name << " skipped " << p.label();
        EXPECT_EQ(r.failure, "");
        ran += r.ran;
        if (!FirstFatalError().empty()) FAIL() << "CUDA context lost: " << FirstFatalError();
      }
    }
  std::printf("  attention_varlen / %s: %d edge checks ran\n", GetParam().c_str(), ran);
  EXPECT_GT(ran, 0);
}

// Each problem of `presets` in the given dtypes, `seeds` seeds, against the device reference.
void CheckAgainstDeviceReference(const Variant& v, std::initializer_list<const char*> presets, std::vector<Dtype> dtypes,
                                 int seeds) {
  const OpDef& op = VarlenOp();
  for (Problem p : Presets(op, presets))
    for (Dtype d : dtypes) {
      p.dtype = d;
      ASSERT_EQ(v.skip_reason ? v.skip_reason(p) : "", "") << v.name << " must run " << p.label();
      for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
        SCOPED_TRACE(v.name + " " + p.label() + " seed " + std::to_string(seed));
        DeviceCase c(op, p, seed);
        ASSERT_EQ(c.error, "");
        RunAndCompare(op, v, p, c, "seed " + std::to_string(seed));
      }
    }
}

TEST_P(AttentionVarlenVariantTest, CiShape) { CheckAgainstDeviceReference(variant(), {"ci"}, {Dtype::kBF16, Dtype::kF16}, 2); }

TEST_P(AttentionVarlenVariantTest, SkewedShapes) { CheckAgainstDeviceReference(variant(), {"skewed"}, {Dtype::kBF16}, 1); }

// Three sequences of 200 (causal, GQA, d 128) packed, and the same values as the attention op's
// B3 [B,H,N,d] batch: one kernel, so the outputs are bitwise equal.
TEST_P(AttentionVarlenVariantTest, UniformIsTheAttentionKernel) {
  const OpDef& op = VarlenOp();
  const OpDef& attn = Op("attention");
  const Variant* fixed = attn.find_variant(GetParam());
  ASSERT_NE(fixed, nullptr);
  const int64_t seqs = 3, h = 4, h_kv = 2, n = 200, d = 128;
  for (bool causal : {true, false}) {
    const std::vector<std::string> flags = causal ? std::vector<std::string>{"causal"} : std::vector<std::string>{};
    const Problem vp = MakeProblem(op, {seqs, h, h_kv, d, n, n, 0, 0, seqs * n, seqs * n, seqs + 1}, Dtype::kBF16, flags);
    const Problem ap = MakeProblem(attn, {seqs, h, h_kv, n, n, d}, Dtype::kBF16, flags);
    ASSERT_EQ(op.validate(vp), "");
    DeviceCase packed(op, vp, 7);
    DeviceCase batch(attn, ap, 7);
    ASSERT_EQ(packed.error, "");
    ASSERT_EQ(batch.error, "");
    // The packed values in the attention op's layout: q [B,H,N,d] from [B*N,H,d]; k, v likewise.
    const size_t row = d * 2;
    for (int t = 0; t < 3; ++t) {
      const int64_t heads = t == 0 ? h : h_kv;
      std::vector<unsigned char> host(batch.host[t].size());
      for (int64_t b = 0; b < seqs; ++b)
        for (int64_t hh = 0; hh < heads; ++hh)
          for (int64_t i = 0; i < n; ++i)
            std::memcpy(&host[((b * heads + hh) * n + i) * row], &packed.host[t][((b * n + i) * heads + hh) * row], row);
      ASSERT_EQ(cudaMemcpy(batch.tensors[t].data, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    ASSERT_EQ(variant().run_cuda(vp, packed.tensors, nullptr), 0);
    ASSERT_EQ(fixed->run_cuda(ap, batch.tensors, nullptr), 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<double> po = packed.Output(av::kO), pl = packed.Output(av::kLse);
    const std::vector<double> bo = batch.Output(3), bl = batch.Output(4);
    int64_t differ = 0;
    for (int64_t b = 0; b < seqs; ++b)
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t c = 0; c < d; ++c)
            differ += po[((b * n + i) * h + hh) * d + c] != bo[((b * h + hh) * n + i) * d + c];
          differ += pl[hh * seqs * n + b * n + i] != bl[(b * h + hh) * n + i];  // lse [H, total_q] vs [B,H,N]
        }
    EXPECT_EQ(differ, 0) << (causal ? "causal" : "not causal");
  }
}

std::vector<std::string> CudaRungs() {
  std::vector<std::string> names;
  for (const Variant* v : CudaVariants(VarlenOp())) names.push_back(v->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AttentionVarlen, AttentionVarlenVariantTest, ::testing::ValuesIn(CudaRungs()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionVarlenVariantTest);

TEST(AttentionVarlenLadder, Registration) {
  const OpDef& op = VarlenOp();
  EXPECT_EQ(CudaRungs(), (std::vector<std::string>{"cuda_v3_flash_mma", "cuda_v4_flash_wgmma"}));
  for (const Variant* v : CudaVariants(op)) {
    EXPECT_EQ(v->dtypes, (std::vector<Dtype>{Dtype::kBF16, Dtype::kF16})) << v->name;
    ASSERT_TRUE(v->launches) << v->name;
    Problem p = op.find_preset("skewed")->problems.at(0);
    p.dtype = Dtype::kF16;
    EXPECT_FALSE(v->launches(p).empty()) << v->name;
    EXPECT_FALSE(v->description.empty()) << v->name;
  }
}

}  // namespace
}  // namespace kbench::kernels::testing
