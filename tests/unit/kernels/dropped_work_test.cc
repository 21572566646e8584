// Tolerances that catch dropped work (kernels/reduction/README.md):
//   reduce_sum at N = 2^28: a float sum in chains of 2^16 (what the tolerance allows) passes, the same
//     sum with 8 elements dropped fails on the check's trials, where the earlier rule (atol N 2^-23,
//     one chain of all N) let it pass; a single chain passes up to 2^16 and the atomic rung says why
//     it skips beyond.
//   layernorm on its service inputs (x in [60, 68]): a one-pass variance, float sums of x and x^2 in
//     a tree (as a block reduction adds them) or in index order, fails the f32 check, while the
//     built-in CPU rung passes on the same inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/registry.h"
#include "gtest/gtest.h"
#include "reduction/layernorm/layernorm.h"
#include "reduction/reduce_sum/reduce_sum.h"
#include "reduction/reduce_sum/reduce_sum_ref.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

// Uniform in [-1, 1], rounded to float, from a seeded splitmix64 stream: 2^28 of them without a buffer.
class Uniform {
 public:
  explicit Uniform(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  float Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0);
  }

 private:
  uint64_t s_;
};

bool Within(double got, double want, const Tolerance& t) { return std::fabs(got - want) <= t.atol + t.rtol * std::fabs(want); }

TEST(ReduceSumTolerance, DroppingAHandfulOfElementsFailsAt2To28) {
  constexpr int64_t kN = int64_t{1} << 28;
  constexpr int kDropped = 8;  // the last 8 elements: a tail a kernel forgets
  const OpDef op = ReduceSumDefinition();
  const Tolerance tol = op.problem_tolerance(MakeProblem(op, {kN}, Dtype::kF32));
  EXPECT_LT(tol.atol, 0.6);
  int failed_trials = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {  // the check's default 3 trials
    Uniform u(seed);
    double exact = 0;
    float total = 0, chain = 0, dropped_total = 0;
    for (int64_t begin = 0; begin < kN; begin += kReduceSumMaxChain) {
      for (int64_t i = begin; i < begin + kReduceSumMaxChain; ++i) {
        const float x = u.Next();
        if (i == kN - kDropped) dropped_total = total + chain;  // the sum so far: the tail left out
        exact += x;
        chain += x;
      }
      total += chain;
      chain = 0;
    }
    // A correct sum in bounded chains passes; the one that drops the tail does not (in some trial).
    EXPECT_TRUE(Within(total, exact, tol)) << "seed " << seed << ": " << total << " vs " << exact;
    const double dropped_error = std::fabs(dropped_total - exact);
    std::printf("  seed %llu: chained error %.3g, with %d dropped %.3g (atol %.3g; the old atol %.3g)\n",
                static_cast<unsigned long long>(seed), std::fabs(total - exact), kDropped, dropped_error, tol.atol,
                static_cast<double>(kN) * 0x1.0p-23);
    EXPECT_LT(dropped_error, static_cast<double>(kN) * 0x1.0p-23) << "the old rule would have passed it";
    failed_trials += !Within(dropped_total, exact, tol);
  }
  EXPECT_GE(failed_trials, 1) << "the check's trials all passed a sum that dropped " << kDropped << " elements";
}

TEST(ReduceSumTolerance, OneChainPassesUpToTheLimitAndTheAtomicRungSkipsBeyond) {
  const OpDef op = ReduceSumDefinition();
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Uniform u(seed);
    double exact = 0;
    float sum = 0;
    for (int64_t i = 0; i < kReduceSumMaxChain; ++i) {
      const float x = u.Next();
      exact += x;
      sum += x;
    }
    EXPECT_TRUE(Within(sum, exact, op.problem_tolerance(MakeProblem(op, {kReduceSumMaxChain}, Dtype::kF32))))
        << "seed " << seed;
  }
  const Variant* atomic = BuiltinRegistry().Find("reduce_sum")->find_variant("cuda_v1_atomic");
  if (atomic == nullptr) return;  // a CPU-only build has no cuda_v1_atomic
  EXPECT_EQ(atomic->skip_reason(MakeProblem(op, {kReduceSumMaxChain}, Dtype::kF32)), "");
  EXPECT_NE(atomic->skip_reason(MakeProblem(op, {kReduceSumMaxChain + 1}, Dtype::kF32)).find("chain"), std::string::npos);
}

// One-pass statistics: mean = S1 / n, var = S2 / n - mean^2 with float sums S1 = sum x, S2 = sum x^2.
float TreeSum(std::vector<float> v) {
  for (size_t width = 1; width < v.size(); width *= 2)
    for (size_t i = 0; i + width < v.size(); i += 2 * width) v[i] += v[i + width];
  return v.empty() ? 0.0f : v[0];
}

template <bool kTree>
void OnePassLayernorm(const Problem& p, std::span<const Tensor> t) {
  const auto* x = static_cast<const float*>(t[0].data);
  const auto* gamma = static_cast<const float*>(t[1].data);
  const auto* beta = static_cast<const float*>(t[2].data);
  auto* out = static_cast<float*>(t[3].data);
  const int64_t rows = p.dim("rows"), cols = p.dim("cols");
  std::vector<float> v(static_cast<size_t>(cols)), sq(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    float s1 = 0, s2 = 0;
    for (int64_t c = 0; c < cols; ++c) {
      v[c] = x[r * cols + c];
      sq[c] = v[c] * v[c];
      s1 += v[c];
      s2 += sq[c];
    }
    if (kTree) s1 = TreeSum(v), s2 = TreeSum(sq);
    const float mean = s1 / static_cast<float>(cols);
    const float var = std::max(0.0f, s2 / static_cast<float>(cols) - mean * mean);
    const float rstd = 1.0f / std::sqrt(var + 1e-5f);
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = (v[c] - mean) * rstd * gamma[c] + beta[c];
  }
}

TEST(LayernormInputs, OnePassVarianceFailsTheCheckOnTheServiceInputs) {
  OpDef op = testing::GetOp("layernorm");  // the built-in op: its inputs as a job gets them, its CPU rung
  ASSERT_GT(op.tensors[0].init_lo, 10.0) << "x must be far from zero";
  for (const char* name : {"one_pass_tree", "one_pass_in_order"}) {
    Variant v;
    v.name = name;
    v.backend = Backend::kCpu;
    v.dtypes = {Dtype::kF32};
    v.run_cpu = std::string(name) == "one_pass_tree" ? OnePassLayernorm<true> : OnePassLayernorm<false>;
    op.variants.push_back(v);
  }
  for (const Problem& base : {op.find_preset("small")->problems[0], MakeProblem(op, {64, 4096})}) {
    Problem p = base;
    p.dtype = Dtype::kF32;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      for (const testing::VariantCheck& c : testing::CheckCpuVariants(op, p, seed)) {
        SCOPED_TRACE(c.variant + " " + p.label() + " seed " + std::to_string(seed));
        if (c.variant.rfind("one_pass", 0) == 0) {
          EXPECT_FALSE(c.result.passed);
          EXPECT_GT(c.result.mismatches, p.dim("rows") * p.dim("cols") / 100);
        } else {
          EXPECT_TRUE(c.result.passed) << c.result.mismatches << " mismatches, max abs " << c.result.max_abs_error;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kbench::kernels
