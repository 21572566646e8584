// The CUDA ladders as registered: names, rungs, dtypes and launch descriptions (these need no GPU),
// the kernels behind the launch descriptions (cudaFuncGetAttributes, on a GPU), and the CPU naive
// variants of the memory-bound ops against their references (host only).
#include <cuda_runtime.h>

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/compare.h"
#include "core/random.h"
#include "core/registry.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {
namespace {

const OpDef& Op(const std::string& name) {
  const OpDef* op = BuiltinRegistry().Find(name);
  if (op == nullptr) throw std::runtime_error("op not registered: " + name);
  return *op;
}

std::vector<std::string> CudaNames(const OpDef& op) {
  std::vector<std::string> names;
  for (const Variant* v : CudaVariants(op)) names.push_back(v->name);
  return names;
}

TEST(CudaLadders, NamesAndRungs) {
  ASSERT_TRUE(BuiltWithCuda());
  using V = std::vector<std::string>;
  EXPECT_EQ(CudaNames(Op("vector_add")), (V{"cuda_v1_naive", "cuda_v2_vec16", "cuda_v3_grid_stride"}));
  EXPECT_EQ(CudaNames(Op("silu_mul_bias")), (V{"cuda_v1_unfused", "cuda_v2_fused"}));
  EXPECT_EQ(CudaNames(Op("reduce_sum")), (V{"cuda_v1_atomic", "cuda_v2_two_pass"}));
  EXPECT_EQ(CudaNames(Op("rmsnorm")), (V{"cuda_v1_naive", "cuda_v2_smem_tree", "cuda_v3_warp_shuffle",
                                         "cuda_v4_warp_row", "cuda_v5_vec16", "cuda_v6_pipelined",
                                         "cuda_v7_cp_async_ring"}));
  EXPECT_EQ(CudaNames(Op("softmax")), (V{"cuda_v1_three_pass", "cuda_v2_online", "cuda_v3_warp_row",
                                         "cuda_v4_block_pipelined", "cuda_v5_cp_async_ring", "cuda_v6_one_barrier"}));
  EXPECT_EQ(CudaNames(Op("layernorm")), (V{"cuda_v1_two_pass", "cuda_v2_welford_vec16", "cuda_v3_pipelined",
                                         "cuda_v4_cp_async_ring"}));
  EXPECT_EQ(CudaNames(Op("add_rmsnorm")), (V{"cuda_v1_unfused", "cuda_v2_fused"}));
}

// The memory-bound ladders (other ops' CUDA variants, e.g. vendor baselines, follow their own rules
// and only get the generic checks below and in the other tests).
const std::vector<std::string>& MemoryBoundOps() {
  static const std::vector<std::string> ops = {"vector_add", "silu_mul_bias", "reduce_sum", "rmsnorm",
                                               "softmax",    "layernorm",     "add_rmsnorm"};
  return ops;
}

TEST(CudaLadders, VariantsAreComplete) {
  const std::regex name_re("cuda_v([0-9]+)_[a-z0-9_]+");
  for (const OpDef& op : BuiltinRegistry().ops()) {
    for (const Variant* v : CudaVariants(op)) {
      SCOPED_TRACE(op.name + " / " + v->name);
      EXPECT_FALSE(v->description.empty());
      EXPECT_TRUE(v->run_cuda);
      EXPECT_FALSE(v->run_cpu);
    }
  }
  for (const std::string& name : MemoryBoundOps()) {
    const OpDef& op = Op(name);
    int rung = 0;
    for (const Variant* v : CudaVariants(op)) {
      SCOPED_TRACE(op.name + " / " + v->name);
      std::smatch m;
      ASSERT_TRUE(std::regex_match(v->name, m, name_re)) << "names are cuda_v<rung>_<short name>";
      EXPECT_EQ(std::stoi(m[1].str()), ++rung) << "rungs are numbered 1, 2, ... in ladder order";
      EXPECT_FALSE(v->description.empty());
      EXPECT_TRUE(v->supports(Dtype::kF32) && v->supports(Dtype::kBF16));
      EXPECT_TRUE(v->run_cuda && v->launches && v->skip_reason);
      EXPECT_FALSE(v->run_cpu);
    }
  }
}

// launches() describes at least one kernel with a real host stub and a legal block for every test
// problem the variant does not skip (a vendor baseline may launch library kernels it cannot name).
TEST(CudaLadders, LaunchDescriptions) {
  for (const OpDef& op : BuiltinRegistry().ops()) {
    for (const Variant* v : CudaVariants(op)) {
      if (!v->launches) {
        EXPECT_TRUE(v->is_baseline) << op.name << " / " << v->name << ": no launches()";
        continue;
      }
      for (Problem p : TestProblems(op)) {
        for (const Dtype d : {Dtype::kF32, Dtype::kBF16}) {
          p.dtype = d;
          if (!v->supports(d) || (v->skip_reason && !v->skip_reason(p).empty())) continue;
          SCOPED_TRACE(op.name + " / " + v->name + " " + p.label());
          const std::vector<LaunchInfo> launches = v->launches(p);
          if (!v->is_baseline) ASSERT_FALSE(launches.empty());
          for (const LaunchInfo& l : launches) {
            EXPECT_FALSE(l.kernel_name.empty());
            EXPECT_NE(l.func, nullptr);
            EXPECT_GE(l.block_threads, 32);
            EXPECT_LE(l.block_threads, 1024);
            EXPECT_EQ(l.block_threads % 32, 0);
            EXPECT_GE(l.dynamic_shared_bytes, 0);
          }
        }
      }
    }
  }
}

// The functions in launches() are kernels the runtime knows (a wrong pointer fails here), and their
// block sizes fit their resource use. Prints registers, shared memory and local memory (spills).
TEST(CudaLadders, KernelAttributes) {
  KBENCH_REQUIRE_GPU_OR_SKIP();
  for (const OpDef& op : BuiltinRegistry().ops()) {
    for (const Variant* v : CudaVariants(op)) {
      std::vector<Problem> problems;
      for (const char* preset : {"small", "canonical"})
        if (const Preset* pr = op.find_preset(preset); pr && !pr->problems.empty()) problems.push_back(pr->problems.front());
      for (const Problem& preset_problem : problems) {
        for (const Dtype d : {Dtype::kF32, Dtype::kBF16}) {
          Problem p = preset_problem;
          p.dtype = d;
          if (!v->supports(d)) continue;
          if ((v->skip_reason && !v->skip_reason(p).empty()) || !v->launches) continue;
          for (const LaunchInfo& l : v->launches(p)) {
            SCOPED_TRACE(op.name + " / " + v->name + " / " + l.kernel_name);
            cudaFuncAttributes attr{};
            const cudaError_t e = cudaFuncGetAttributes(&attr, l.func);
            ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
            EXPECT_LE(l.block_threads, attr.maxThreadsPerBlock);
            std::printf("  %-12s %-22s %-48s block %4d regs %3d smem %5zu local %4zu\n", op.name.c_str(),
                        v->name.c_str(), l.kernel_name.c_str(), l.block_threads, attr.numRegs,
                        attr.sharedSizeBytes, attr.localSizeBytes);
          }
        }
      }
    }
  }
}

// CPU naive variants of the memory-bound ops (host only): same inputs and check as the GPU test.
TEST(MemoryBoundOps, CpuNaiveMatchesReference) {
  for (const char* name : {"silu_mul_bias", "reduce_sum", "layernorm", "add_rmsnorm"}) {
    const OpDef& op = Op(name);
    const Variant* v = op.find_variant("cpu_naive");
    ASSERT_NE(v, nullptr) << name;
    for (Problem p : TestProblems(op)) {
      for (const Dtype d : {Dtype::kF32, Dtype::kBF16}) {
        p.dtype = d;
        SCOPED_TRACE(std::string(name) + " " + p.label());
        std::vector<std::vector<float>> storage;
        std::vector<Tensor> tensors, inputs;
        size_t input_index = 0;
        for (const TensorSpec& spec : op.tensors) {
          const int64_t numel = spec.numel(p);
          storage.emplace_back(static_cast<size_t>(numel) + 1);
          tensors.push_back(Tensor{storage.back().data(), numel, spec.dtype(p)});
          if (spec.is_output) {
            Poison(tensors.back());
          } else {
            FillInput(spec, p, tensors.back(), 7, input_index++);
            inputs.push_back(tensors.back());
          }
        }
        v->run_cpu(p, tensors);
        std::vector<std::vector<double>> expected;
        op.reference(p, inputs, expected);
        size_t k = 0;
        for (const Tensor& t : tensors) {
          if (!op.tensors[&t - tensors.data()].is_output) continue;
          std::vector<double> actual(static_cast<size_t>(t.numel));
          for (int64_t e = 0; e < t.numel; ++e) actual[e] = LoadAsDouble(t.data, t.dtype, e);
          const CompareResult c = Compare(actual, expected[k++], ToleranceFor(op, p), t.dtype);
          EXPECT_TRUE(c.passed) << c.mismatches << " mismatches, first at " << c.first_mismatch << ", max abs "
                                << c.max_abs_error << ", max rel " << c.max_rel_error;
        }
      }
    }
  }
}

// The reduce_sum tolerance grows with N (a float sum's rounding error does) and is tight for small N:
// 2^-23 sqrt(N min(N, 2^16)) (reduce_sum_ref.cc), 0.5 at 2^28 where 8 dropped elements must fail. A
// rule that grew like N again (32 at 2^28) would let hundreds of dropped elements pass.
TEST(MemoryBoundOps, ReduceSumToleranceScalesWithN) {
  const OpDef& op = Op("reduce_sum");
  ASSERT_TRUE(op.problem_tolerance);
  const Tolerance small = op.problem_tolerance(MakeProblem(op, {769}, Dtype::kF32));
  const Tolerance mid = op.problem_tolerance(MakeProblem(op, {int64_t{1} << 24}, Dtype::kF32));
  const Tolerance big = op.problem_tolerance(MakeProblem(op, {int64_t{1} << 28}, Dtype::kF32));
  EXPECT_LT(small.atol, 1e-3);
  EXPECT_NEAR(big.atol, 0.5, 0.01);
  EXPECT_NEAR(big.atol / mid.atol, 4.0, 0.01);  // sqrt(N) growth past the chain length
}

}  // namespace
}  // namespace kbench::kernels::testing
