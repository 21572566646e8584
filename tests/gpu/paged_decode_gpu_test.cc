// The paged_decode ladder (kernels/attention/paged_decode) on a GPU:
//   - every CUDA rung on the small, edge and ci presets against the fp64 CPU reference
//     (gpu_test_util: guard bands, poisoned outputs, untouched inputs), seeds 1-3 aligned and seed 4
//     with every pointer one element off, bitwise repeatable on seed 1;
//   - the fp64 device reference against the CPU one;
//   - every rung on the decode and skewed presets (Llama-3-8B shapes, up to 8.6 GB of KV) against the
//     device reference, two seeds, and v2/v3 run twice on the same inputs: the same bits (a fixed
//     split; the split plan depends only on the problem and the SM count);
//   - the split plan the result reports: v2 and v3 split the long contexts, v1 never does.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "attention/paged_decode/paged_decode.h"
#include "core/random.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

const OpDef& Op() {
  const OpDef* op = BuiltinRegistry().Find("paged_decode");
  if (op == nullptr) std::abort();
  return *op;
}

std::vector<Problem> Preset(const char* name) {
  std::vector<Problem> out = Op().find_preset(name)->problems;
  for (Problem& p : out) p.dtype = Dtype::kBF16;
  return out;
}

int SplitsOf(const Variant& v, const Problem& p) {
  const std::string name = v.launches(p).at(0).kernel_name;
  const size_t at = name.find("splits=");
  return at == std::string::npos ? -1 : std::stoi(name.substr(at + 7));
}

TEST(PagedDecodeGpu, EveryRungMatchesTheCpuReferenceOnSmallEdgeAndCi) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = Op();
  std::vector<Problem> problems = Preset("small");
  for (const char* name : {"edge", "quick"})
    for (const Problem& p : Preset(name)) problems.push_back(p);
  int ran = 0;
  for (const Variant* v : CudaVariants(op)) {
    for (const Problem& p : problems)
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        CheckOptions o;
        o.seed = seed;
        o.offset_elems = seed == 4 ? 1 : 0;
        o.check_deterministic = seed == 1;
        const CheckResult r = CheckCudaVariant(op, *v, p, o);
        EXPECT_TRUE(r.skipped.empty()) << v->name << " " << p.label() << " skipped: " << r.skipped;
        EXPECT_TRUE(r.failure.empty()) << r.failure;
        ran += r.ran;
        if (!FirstFatalError().empty()) FAIL() << "CUDA context lost: " << FirstFatalError();
      }
  }
  EXPECT_EQ(ran, static_cast<int>(CudaVariants(op).size() * problems.size() * 4));
}

// Device buffers for one problem's tensors, inputs filled as the worker fills them.
struct Buffers {
  std::vector<std::vector<unsigned char>> host;
  std::vector<Tensor> host_tensors, dev;
  ~Buffers() {
    for (const Tensor& t : dev) cudaFree(t.data);
  }
};

bool Upload(const Problem& p, uint64_t seed, Buffers* b) {
  const OpDef& op = Op();
  uint64_t stream = 0;
  for (const TensorSpec& spec : op.tensors) {
    const int64_t n = spec.numel(p);
    const size_t bytes = static_cast<size_t>(n * DtypeBytes(spec.dtype(p)));
    b->host.emplace_back(spec.is_output ? 0 : bytes);
    Tensor h{b->host.back().data(), n, spec.dtype(p)};
    if (!spec.is_output) FillInput(spec, p, h, seed, stream++);
    b->host_tensors.push_back(h);
    void* d = nullptr;
    if (cudaMalloc(&d, bytes) != cudaSuccess) return false;
    b->dev.push_back({d, n, spec.dtype(p)});
    if (!spec.is_output && cudaMemcpy(d, h.data, bytes, cudaMemcpyHostToDevice) != cudaSuccess) return false;
  }
  return true;
}

std::vector<double> RunGpuReference(const Problem& p, const Buffers& b) {
  const int64_t n = b.dev[paged_decode::kOut].numel;
  double* d = nullptr;
  std::vector<double> out(static_cast<size_t>(n));
  EXPECT_EQ(cudaMalloc(&d, n * sizeof(double)), cudaSuccess);
  double* const outs[] = {d};
  EXPECT_EQ(Op().gpu_reference(p, std::span(b.dev).first(5), outs, nullptr), 0);
  EXPECT_EQ(cudaMemcpy(out.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  return out;
}

// Runs a rung (output poisoned first) and returns the output's raw bf16 bits.
std::vector<uint16_t> RunRung(const Variant& v, const Problem& p, const Buffers& b) {
  const Tensor& out = b.dev[paged_decode::kOut];
  std::vector<uint16_t> bits(static_cast<size_t>(out.numel));
  EXPECT_EQ(cudaMemset(out.data, 0xFF, out.numel * 2), cudaSuccess);
  EXPECT_EQ(v.run_cuda(p, b.dev, nullptr), 0) << v.name;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << v.name << " " << p.label();
  EXPECT_EQ(cudaMemcpy(bits.data(), out.data, out.numel * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  return bits;
}

TEST(PagedDecodeGpu, DeviceReferenceMatchesTheCpuReference) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  std::vector<Problem> problems = Preset("small");
  for (const Problem& p : Preset("edge")) problems.push_back(p);
  problems.push_back(MakeProblem(Op(), {2, 8, 2, 128, 16, 5000, 0, 626, 313}, Dtype::kBF16));
  for (const Problem& p : problems) {
    Buffers b;
    ASSERT_TRUE(Upload(p, 3, &b)) << p.label();
    const std::vector<double> gpu = RunGpuReference(p, b);
    std::vector<std::vector<double>> cpu;
    Op().reference(p, std::span(b.host_tensors).first(5), cpu);
    const CompareResult r = Compare(gpu, cpu[0], Tolerance{.rtol = 1e-12, .atol = 1e-14});
    EXPECT_TRUE(r.passed) << p.label() << ": max abs " << r.max_abs_error;
  }
}

TEST(PagedDecodeGpu, EveryRungOnDecodeAndSkewedShapesRepeatably) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = Op();
  std::vector<Problem> problems = Preset("decode");
  for (const Problem& p : Preset("skewed")) problems.push_back(p);
  const Tolerance tol = op.tolerance(Dtype::kBF16);
  for (const Problem& p : problems)
    for (uint64_t seed : {1, 2}) {
      Buffers b;
      ASSERT_TRUE(Upload(p, seed, &b)) << p.label();
      const std::vector<double> ref = RunGpuReference(p, b);
      for (const Variant* v : CudaVariants(op)) {
        const std::vector<uint16_t> bits = RunRung(*v, p, b);
        std::vector<double> out(bits.size());
        for (size_t i = 0; i < bits.size(); ++i) out[i] = Bf16ToFloat(bits[i]);
        const CompareResult r = Compare(out, ref, tol);
        EXPECT_TRUE(r.passed) << v->name << " " << p.label() << " seed " << seed << ": " << r.mismatches
                              << " mismatches (first " << r.first_mismatch << "), " << r.non_finite
                              << " non-finite, max abs " << r.max_abs_error << ", max rel " << r.max_rel_error;
        if (v->name != "cuda_v1_paged" && seed == 1)
          EXPECT_EQ(RunRung(*v, p, b), bits) << v->name << " " << p.label() << ": a second run gave other bits";
        if (seed == 1)
          std::printf("  %-22s %-40s splits %d, max abs %.2e, max rel %.2e\n", v->name.c_str(), p.label().c_str(),
                      SplitsOf(*v, p), r.max_abs_error, r.max_rel_error);
      }
      if (!FirstFatalError().empty() || cudaGetLastError() != cudaSuccess) FAIL() << "CUDA error";
    }
}

TEST(PagedDecodeGpu, SplitPlanIsReported) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  const OpDef& op = Op();
  const Problem long_one = MakeProblem(op, {1, 32, 8, 128, 16, 32768, 0, 2048, 2048}, Dtype::kBF16);
  EXPECT_EQ(SplitsOf(*op.find_variant("cuda_v1_paged"), long_one), 1);
  EXPECT_GT(SplitsOf(*op.find_variant("cuda_v2_split_kv"), long_one), 1);
  EXPECT_GT(SplitsOf(*op.find_variant("cuda_v3_gqa_split_kv"), long_one), 1);
  EXPECT_GT(SplitsOf(*op.find_variant("cuda_v4_gqa_mma"), long_one), 1);
  // A batch that fills the device without splitting is not split.
  const Problem wide = MakeProblem(op, {64, 32, 8, 128, 16, 1024, 0, 4096, 64}, Dtype::kBF16);
  EXPECT_EQ(SplitsOf(*op.find_variant("cuda_v2_split_kv"), wide), 1);
  // v4 plans one block an SM: batch 16's 128 (sequence, head group) blocks fill a device of fewer
  // than 256 SMs (the H100's and H200's 132) without splitting, so no partials and no merge.
  const Problem ci = MakeProblem(op, {16, 32, 8, 128, 16, 4096, 0, 4096, 256}, Dtype::kBF16);
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  if (sms < 256) EXPECT_EQ(SplitsOf(*op.find_variant("cuda_v4_gqa_mma"), ci), 1);
}

}  // namespace
}  // namespace kbench::kernels::testing
