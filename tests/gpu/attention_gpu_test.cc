// The CUDA attention ladder (kernels/attention/attention/*.cu) on a GPU.
//
//   AttentionGpuReference.MatchesCpuReference: the f32 device reference (used past 2 GFLOP) against
//     the fp64 CPU one on the small and edge presets, bf16 and f16: within 1e-4 (f32 accumulation).
//   AttentionVariantTest.EdgeShapes (one test per CUDA rung): the small and edge presets (N of 1, 17,
//     1000, 4097; N_q = 1; causal with N_q < N_kv; H_kv = 1; d = 256), bf16 and f16, seeds 1-3,
//     against the CPU reference with the op's tolerance, outputs and guard bands poisoned with NaN,
//     inputs checked untouched (gpu_test_util.h). A rung may skip only d = 256 (and says why).
//   AttentionVariantTest.CiShape / LargeShapes: the ci preset (two seeds) and the canonical and gqa
//     presets (B8 H16 N4096 d128 and the others, causal and not; one seed, the device reference takes
//     seconds there), bf16 and f16, against the device reference with the same tolerance.
//   AttentionVariantTest.ScoreJumps: scores that jump far past a row's running maximum in a later key
//     tile (by ~2^40 and by more than f32's range in exponentials), d 64 and 128, causal and not:
//     v4's stale-maximum softmax must take its exact path there (and every rung must stay finite).
//   AttentionLadder.Registration: names and order of the rungs, their dtypes and launch descriptions.
// Skips (GTEST_SKIP) only where no GPU is visible; fails where one is but CUDA cannot use it.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/compare.h"
#include "core/random.h"
#include "core/registry.h"
#include "device_case.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

const OpDef& AttentionOp() {
  const OpDef* op = BuiltinRegistry().Find("attention");
  if (op == nullptr) throw std::runtime_error("attention is not registered");
  return *op;
}

TEST(AttentionGpuReference, MatchesCpuReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = AttentionOp();
  ASSERT_TRUE(op.gpu_reference) << "the CUDA build sets attention's gpu_reference";
  for (Problem p : Presets(op, {"small", "edge"}))
    for (Dtype d : {Dtype::kBF16, Dtype::kF16}) {
      p.dtype = d;
      SCOPED_TRACE(p.label());
      DeviceCase c(op, p, 1);
      ASSERT_EQ(c.error, "");
      std::string error;
      const auto got = DeviceReference(op, p, c, &error);
      ASSERT_EQ(error, "");
      // The CPU reference on the host copies of the same inputs.
      std::vector<Tensor> inputs;
      for (int i = 0; i < 3; ++i) inputs.push_back(Tensor{c.host[i].data(), c.tensors[i].numel, d});
      std::vector<std::vector<double>> want;
      op.reference(p, inputs, want);
      for (int out = 0; out < 2; ++out) {
        const CompareResult r = Compare(got[out], want[out], Tolerance{.rtol = 1e-5, .atol = 1e-4});
        EXPECT_TRUE(r.passed) << "output " << out << ": " << r.mismatches << " mismatches, max abs " << r.max_abs_error;
      }
    }
}

class AttentionVariantTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { KBENCH_REQUIRE_GPU_OR_SKIP(); }
  const Variant& variant() const { return *AttentionOp().find_variant(GetParam()); }
};

TEST_P(AttentionVariantTest, EdgeShapes) {
  const OpDef& op = AttentionOp();
  int ran = 0;
  for (Problem p : Presets(op, {"small", "edge"}))
    for (Dtype d : {Dtype::kBF16, Dtype::kF16}) {
      p.dtype = d;
      // Three seeds; one for the 4097 x 4097 case, whose fp64 CPU reference is the slow part.
      const int seeds = op.cost(p).flops > 1e9 ? 1 : 3;
      for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
        const CheckResult r = CheckCudaVariant(op, variant(), p, CheckOptions{.seed = seed});
        if (!r.skipped.empty()) {
          EXPECT_EQ(p.dim("d"), 256) << variant().name << " skipped " << p.label() << ": " << r.skipped;
          break;
        }
        EXPECT_EQ(r.failure, "");
        ran += r.ran;
      }
    }
  std::printf("  attention / %s: %d edge checks ran\n", GetParam().c_str(), ran);
  EXPECT_GT(ran, 0);
}

// Each problem of `presets` in bf16 and f16, `seeds` seeds, against the device reference.
void CheckAgainstDeviceReference(const Variant& v, std::initializer_list<const char*> presets, int seeds) {
  const OpDef& op = AttentionOp();
  for (Problem p : Presets(op, presets))
    for (Dtype d : {Dtype::kBF16, Dtype::kF16}) {
      p.dtype = d;
      const std::string skip = v.skip_reason ? v.skip_reason(p) : "";
      ASSERT_EQ(skip, "") << v.name << " must run " << p.label();
      for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
        SCOPED_TRACE(v.name + " " + p.label() + " seed " + std::to_string(seed));
        DeviceCase c(op, p, seed);
        ASSERT_EQ(c.error, "");
        RunAndCompare(op, v, p, c, "seed " + std::to_string(seed));
      }
    }
}

// The ci preset (a Llama-3-8B layer's causal GQA prefill), two seeds: quick enough for every run.
TEST_P(AttentionVariantTest, CiShape) { CheckAgainstDeviceReference(variant(), {"ci"}, 2); }

// B8 H16 N4096 d128, B16 H16 N2048 d64 and the GQA prefill, causal and not: the timed problems.
TEST_P(AttentionVariantTest, LargeShapes) { CheckAgainstDeviceReference(variant(), {"canonical", "gqa"}, 1); }

// Scores that jump in later key tiles. q gets +1 on every element (so q . 1 ~ d for every row) and
// two keys become c * (1, ..., 1): key 300 (key tile 2) with c = 3, scores ~3d, and key 520 (tile
// 4) with c = 20, ~20d: in log2 units (x scale x log2 e) 35-49 and 230-330 above scores of ~0-7.
// v4 first takes exponentials against the running maxima: the first jump makes them 2^29-2^43 (past
// its 2^15 partial-sum limit), the second overflows f32 (inf): only its exact path, recomputing S,
// gives the right O and LSE. N = 1000: 8 key tiles, the last partial.
TEST_P(AttentionVariantTest, ScoreJumps) {
  const OpDef& op = AttentionOp();
  const Variant& v = variant();
  int ran = 0;
  for (int64_t d : {128, 64})
    for (bool causal : {false, true})
      for (Dtype dt : {Dtype::kBF16, Dtype::kF16}) {
        Problem p = op.find_preset("ci")->problems.at(0);
        for (auto& [name, value] : p.dims) {
          if (name == "B") value = 1;
          if (name == "H") value = 4;
          if (name == "H_kv") value = 2;
          if (name == "N_q" || name == "N_kv") value = 1000;
          if (name == "d") value = d;
        }
        p.flags = causal ? std::vector<std::string>{"causal"} : std::vector<std::string>{};
        p.dtype = dt;
        if (const std::string skip = v.skip_reason ? v.skip_reason(p) : ""; !skip.empty()) {
          ADD_FAILURE() << v.name << " skipped " << p.label() << ": " << skip;
          continue;
        }
        SCOPED_TRACE(v.name + " " + p.label());
        DeviceCase c(op, p, 11);
        ASSERT_EQ(c.error, "");
        const auto edit = [&](int i, const auto& f) {  // input i (q or k): its host copy edited, then uploaded
          const Tensor& t = c.tensors[i];
          std::vector<unsigned char>& raw = c.host[i];
          f(raw.data(), t);
          ASSERT_EQ(cudaMemcpy(t.data, raw.data(), raw.size(), cudaMemcpyHostToDevice), cudaSuccess);
        };
        edit(0, [](void* h, const Tensor& t) {
          for (int64_t e = 0; e < t.numel; ++e) StoreFromDouble(h, t.dtype, e, LoadAsDouble(h, t.dtype, e) + 1.0);
        });
        edit(1, [&](void* h, const Tensor& t) {
          for (int64_t row = 0; row < t.numel / d; ++row) {  // [B][H_kv][N_kv][d]: key = row % N_kv
            const int64_t key = row % 1000;
            if (key != 300 && key != 520) continue;
            for (int64_t e = 0; e < d; ++e) StoreFromDouble(h, t.dtype, row * d + e, key == 300 ? 3.0 : 20.0);
          }
        });
        RunAndCompare(op, v, p, c, "score jumps");
        ++ran;
      }
  std::printf("  attention / %s: %d score-jump problems checked\n", v.name.c_str(), ran);
  EXPECT_EQ(ran, 8);
}

// v4's persistent blocks take tiles from a global counter that the last block sets back to zero.
// Launches back to back, on problems of a different tile count and each with freshly poisoned
// outputs, must each write every element, the same bits for the same problem: a counter left
// behind would skip tiles and leave the NaN poison.
TEST(AttentionV4Persistent, BackToBackLaunchesWriteEveryTileTheSameBits) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = AttentionOp();
  const Variant* v = op.find_variant("cuda_v4_flash_wgmma");
  ASSERT_NE(v, nullptr);
  Problem big = op.find_preset("ci")->problems.at(0);  // causal GQA, 2 x 32 heads x 16 query tiles
  ASSERT_EQ(big.dim("N_q"), 2048);
  big.dtype = Dtype::kBF16;
  if (const std::string skip = v->skip_reason(big); !skip.empty()) GTEST_FAIL() << skip;
  Problem small = big;  // 5 query tiles a head, the last one partial
  for (auto& d : small.dims)
    if (d.first == "N_q" || d.first == "N_kv") d.second = 640;
  std::vector<unsigned char> first;
  for (int launch = 0; launch < 4; ++launch) {
    const Problem& p = launch == 1 ? small : big;
    DeviceCase c(op, p, 7);
    ASSERT_EQ(c.error, "");
    const Tensor& o = c.tensors[3];
    const size_t bytes = static_cast<size_t>(o.numel * DtypeBytes(o.dtype));  // poisoned (NaN) by DeviceCase
    ASSERT_EQ(v->run_cuda(p, c.tensors, nullptr), 0) << "launch " << launch;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<unsigned char> raw(bytes);
    ASSERT_EQ(cudaMemcpy(raw.data(), o.data, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    int64_t nan = 0;
    for (int64_t e = 0; e < o.numel; ++e) nan += std::isnan(LoadAsDouble(raw.data(), o.dtype, e)) ? 1 : 0;
    EXPECT_EQ(nan, 0) << "launch " << launch << " (" << p.label() << ") left outputs unwritten";
    if (launch == 0) first = raw;
    if (launch >= 2) EXPECT_EQ(raw, first) << "launch " << launch << " differs from launch 0";
  }
}

std::vector<std::string> CudaRungs() {
  std::vector<std::string> names;
  for (const Variant* v : CudaVariants(AttentionOp())) names.push_back(v->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionVariantTest, ::testing::ValuesIn(CudaRungs()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionVariantTest);

TEST(AttentionLadder, Registration) {
  const OpDef& op = AttentionOp();
  EXPECT_EQ(CudaRungs(), (std::vector<std::string>{"cuda_v1_naive", "cuda_v2_flash_simt", "cuda_v3_flash_mma",
                                                   "cuda_v4_flash_wgmma"}));
  for (const Variant* v : CudaVariants(op)) {
    EXPECT_EQ(v->dtypes, (std::vector<Dtype>{Dtype::kBF16, Dtype::kF16})) << v->name;
    ASSERT_TRUE(v->launches) << v->name;
    Problem p = op.find_preset("canonical")->problems.at(0);
    p.dtype = Dtype::kF16;
    EXPECT_FALSE(v->launches(p).empty()) << v->name;
    EXPECT_FALSE(v->description.empty()) << v->name;
  }
  // The Triton rung is registered beside them (checked by triton_gpu_test, through the worker).
  const Variant* triton = op.find_variant("triton_attention");
  ASSERT_NE(triton, nullptr);
  EXPECT_FALSE(triton->triton_source.empty());
}

}  // namespace
}  // namespace kbench::kernels::testing
