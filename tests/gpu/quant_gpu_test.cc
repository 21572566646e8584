// The quant family and the fused elementwise ops of issue 22 on a GPU (kernels_gpu_test already runs
// every CUDA rung of every op on the small and edge presets, aligned and unaligned): here every rung
// on the edge presets and on the canonical shapes of at most 2^26 elements a tensor (8192x4096,
// 8192x2x4096, Llama-3-8B rope at 8192 tokens; the edge presets hold 14336-wide rows) against the CPU
// reference, with bit-for-bit determinism; the FP8 rungs' all-zero rows give scale 0 and q 0 (no
// NaN); and rope in place (q_out == q, k_out == k) gives the bits of the out-of-place run.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

const char* const kOps[] = {"fp8_quant", "rmsnorm_fp8_quant", "silu_mul_fp8_quant", "silu_and_mul", "rope"};
constexpr int64_t kMaxCanonicalElems = int64_t{1} << 26;  // CPU reference time on the GPU host

int64_t Elements(const OpDef& op, const Problem& p) {
  int64_t n = 0;
  for (const TensorSpec& t : op.tensors) n = std::max(n, t.numel(p));
  return n;
}

class QuantGpu : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantGpu, EveryRungOnEdgeAndCanonicalShapes) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef* op = BuiltinRegistry().Find(GetParam());
  ASSERT_NE(op, nullptr) << GetParam();
  std::vector<Problem> problems = op->find_preset("edge")->problems;
  for (const Problem& p : op->find_preset("canonical")->problems)
    if (Elements(*op, p) <= kMaxCanonicalElems) problems.push_back(p);
  const auto variants = CudaVariants(*op);
  ASSERT_GE(variants.size(), 2u);
  for (const Variant* v : variants) {
    int ran = 0;
    for (Problem p : problems) {
      p.dtype = Dtype::kBF16;
      CheckOptions o;
      o.seed = 11;
      o.check_deterministic = true;
      const CheckResult r = CheckCudaVariant(*op, *v, p, o);
      if (!r.skipped.empty()) {
        std::printf("  [skip] %s %s: %s\n", v->name.c_str(), p.label().c_str(), r.skipped.c_str());
        continue;
      }
      ran += r.ran;
      EXPECT_TRUE(r.failure.empty()) << r.failure;
      if (!FirstFatalError().empty()) FAIL() << "CUDA context lost: " << FirstFatalError();
    }
    std::printf("  %s / %s: %d problems checked\n", op->name.c_str(), v->name.c_str(), ran);
    EXPECT_EQ(ran, static_cast<int>(problems.size())) << v->name << ": a problem was skipped";
  }
}

INSTANTIATE_TEST_SUITE_P(Issue22, QuantGpu, ::testing::ValuesIn(kOps),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// Device copies of an op's tensors for p, inputs filled as the worker fills them.
struct Device {
  std::vector<void*> ptrs;
  std::vector<Tensor> tensors;
  std::vector<std::vector<unsigned char>> host;
  ~Device() {
    for (void* p : ptrs) cudaFree(p);
  }
};

void Upload(const OpDef& op, const Problem& p, uint64_t seed, Device& d) {
  size_t input = 0;
  for (const TensorSpec& s : op.tensors) {
    const Dtype dt = s.dtype(p);
    const size_t bytes = static_cast<size_t>(s.numel(p) * DtypeBytes(dt));
    d.host.emplace_back(bytes);
    Tensor h{d.host.back().data(), s.numel(p), dt};
    if (!s.is_output) FillInput(s, p, h, seed, input++);
    void* ptr = nullptr;
    ASSERT_EQ(cudaMalloc(&ptr, std::max<size_t>(bytes, 16)), cudaSuccess);
    d.ptrs.push_back(ptr);
    ASSERT_EQ(cudaMemcpy(ptr, h.data, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    d.tensors.push_back(Tensor{ptr, s.numel(p), dt});
  }
}

std::vector<unsigned char> Download(const Tensor& t) {
  std::vector<unsigned char> v(static_cast<size_t>(t.numel * DtypeBytes(t.dtype)));
  EXPECT_EQ(cudaMemcpy(v.data(), t.data, v.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

// rope's rungs accept q_out == q and k_out == k: the in-place run writes the out-of-place bits.
TEST(RopeGpu, InPlaceMatchesOutOfPlace) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef* op = BuiltinRegistry().Find("rope");
  ASSERT_NE(op, nullptr);
  for (const Variant* v : CudaVariants(*op)) {
    for (const std::vector<std::string>& flags : {std::vector<std::string>{}, std::vector<std::string>{"gptj"}}) {
      for (const std::vector<int64_t>& dims : {std::vector<int64_t>{8192, 32, 8, 128}, {5, 2, 2, 80}}) {
        const Problem p = MakeProblem(*op, dims, Dtype::kBF16, flags);
        SCOPED_TRACE(v->name + " " + p.label());
        Device d;
        Upload(*op, p, 3, d);
        ASSERT_EQ(v->run_cuda(p, d.tensors, nullptr), 0);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const auto q_out = Download(d.tensors[4]), k_out = Download(d.tensors[5]);
        ASSERT_NE(q_out, d.host[0]) << "the rotation changed nothing";
        std::vector<Tensor> aliased = d.tensors;
        aliased[4] = aliased[0];
        aliased[5] = aliased[1];
        ASSERT_EQ(v->run_cuda(p, aliased, nullptr), 0);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_EQ(Download(d.tensors[0]), q_out);
        EXPECT_EQ(Download(d.tensors[1]), k_out);
      }
    }
  }
}

// Every FP8 rung, on rows of all zeros between rows with values past 448: the zero rows' scales are
// exactly 0 and their q bytes are +0 or -0 (0x00 / 0x80), never NaN (0x7f / 0xff).
TEST(QuantGpu, ZeroRowsGiveZeroScaleAndNoNan) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  for (const char* name : {"fp8_quant", "rmsnorm_fp8_quant", "silu_mul_fp8_quant"}) {
    const OpDef* op = BuiltinRegistry().Find(name);
    ASSERT_NE(op, nullptr);
    const bool gated = op->dims.size() == 3;
    const Problem p = MakeProblem(*op, gated ? std::vector<int64_t>{64, 2, 4096} : std::vector<int64_t>{64, 4096},
                                  Dtype::kBF16, {"zero_rows", "outliers"});
    const int64_t cols = gated ? p.dim("d") : p.dim("cols");
    for (const Variant* v : CudaVariants(*op)) {
      SCOPED_TRACE(std::string(name) + " " + v->name);
      Device d;
      Upload(*op, p, 2, d);
      const size_t q_index = op->tensors.size() - 2, s_index = op->tensors.size() - 1;
      ASSERT_EQ(cudaMemset(d.tensors[q_index].data, 0xff, d.host[q_index].size()), cudaSuccess);
      ASSERT_EQ(cudaMemset(d.tensors[s_index].data, 0xff, d.host[s_index].size()), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(v->run_cuda(p, d.tensors, nullptr), 0);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto q = Download(d.tensors[q_index]), s = Download(d.tensors[s_index]);
      int nan = 0, zero_rows = 0;
      for (int64_t r = 0; r < p.dim("rows"); ++r) {
        float scale;
        std::memcpy(&scale, s.data() + r * 4, 4);
        for (int64_t c = 0; c < cols; ++c) nan += (q[r * cols + c] & 0x7f) == 0x7f;
        if (r % 4 != 1) continue;
        ++zero_rows;
        EXPECT_EQ(scale, 0.0f) << "row " << r;
        for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(q[r * cols + c] & 0x7f, 0) << "row " << r << " col " << c;
      }
      EXPECT_EQ(nan, 0);
      EXPECT_EQ(zero_rows, 16);
    }
  }
}

}  // namespace
}  // namespace kbench::kernels::testing
