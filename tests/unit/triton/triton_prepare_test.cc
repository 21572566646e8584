// The Triton capability probe and the GPU-free half of a Triton measurement
// (worker/triton/triton_compiler.h, triton_prepare.h): a node without Python or Triton reports the
// capability absent and Triton kernels come back SKIPPED with that reason; the suite's Triton rungs
// are registered with readable descriptions. Where Triton is installed (scripts/install-deps.sh),
// kernels compile for an explicit sm_90 target with no GPU: every rung of the suite (every config and
// dtype), the cache, and compile errors as COMPILE_ERROR with Triton's message.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/registry.h"
#include "worker/custom/contract.h"
#include "worker/isolation/child_env.h"
#include "worker/triton/launch_description.h"
#include "worker/triton/triton_compiler.h"
#include "worker/triton/triton_prepare.h"

namespace kbench::worker {
namespace {

using ::testing::HasSubstr;

const kernels::OpDef& Op(const std::string& name) {
  const kernels::OpDef* op = kernels::BuiltinRegistry().Find(name);
  EXPECT_NE(op, nullptr) << name;
  return *op;
}

kernels::Problem Problem(const kernels::OpDef& op, std::vector<int64_t> dims, kernels::Dtype dtype) {
  return kernels::MakeProblem(op, std::move(dims), dtype);
}

constexpr char kRmsnorm[] = R"PY(import triton
import triton.language as tl

@triton.jit
def my_rmsnorm(x, weight, out, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / cols + 1e-6)
    w = tl.load(weight + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * cols + offs, (v * rstd * w).to(out.dtype.element_ty), mask=mask)

kbench_launch = {"kernel": "my_rmsnorm", "grid": ["rows"], "constexprs": {"BLOCK": "next_pow2(cols)"},
                 "num_warps": 4, "num_stages": 1}
)PY";

TEST(TritonCapability, AbsentWithoutPython) {
  const TritonCapability c = ProbeTriton("/nonexistent/kbench/python3", std::chrono::seconds(30));
  EXPECT_FALSE(c.available);
  EXPECT_THAT(c.reason, HasSubstr("/nonexistent/kbench/python3"));
  EXPECT_THAT(c.Describe(), HasSubstr("absent: "));
  EXPECT_FALSE(ProbeTriton("").available);
  EXPECT_THAT(ProbeTriton("").reason, HasSubstr("no python3"));
}

// A Python whose site-packages are hidden (-S): Triton cannot be imported, whatever is installed.
TEST(TritonCapability, AbsentWithoutTriton) {
  const std::string python = FindPython();
  if (python.empty()) GTEST_SKIP() << "no python3 here";
  const std::string dir = MakePrivateDir("tritontest");
  const std::string fake = dir + "/python-without-site";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\nexec " << python << " -S \"$@\"\n";
  }
  chmod(fake.c_str(), 0755);
  const TritonCapability c = ProbeTriton(fake, std::chrono::seconds(60));
  RemovePrivateDir(dir);
  EXPECT_FALSE(c.available);
  EXPECT_THAT(c.reason, HasSubstr("triton cannot be imported"));
  EXPECT_FALSE(c.python_version.empty());  // the interpreter ran: it is Triton that is missing
}

TEST(TritonPrepare, SkippedOnANodeWithoutTriton) {
  const TritonCapability absent{.available = false, .reason = "triton cannot be imported: No module named 'triton'"};
  const kernels::OpDef& op = Op("rmsnorm");
  const TritonPrepared p = PrepareTriton(op, {kRmsnorm, "my.py", "custom:mine"}, Problem(op, {8, 64}, kernels::Dtype::kBF16),
                                         {.compute_capability = 90, .capability = &absent});
  EXPECT_EQ(p.status, v1::SKIPPED);
  EXPECT_THAT(p.message, HasSubstr("Triton is not available on this node"));
  EXPECT_THAT(p.message, HasSubstr("No module named 'triton'"));
  EXPECT_TRUE(p.configs.empty());
}

TEST(TritonPrepare, ParamsFollowTheContract) {
  const kernels::OpDef& op = Op("rmsnorm");
  std::vector<TritonParam> params = TritonParamsFor(op, Problem(op, {769, 5125}, kernels::Dtype::kBF16));
  ASSERT_EQ(params.size(), 5u);
  EXPECT_EQ(params[0].type, "*bf16");
  EXPECT_TRUE(params[0].div16);
  EXPECT_EQ(params[3].name, "rows");
  EXPECT_EQ(params[3].type, "i64");
  EXPECT_FALSE(params[3].div16);  // 769
  params = TritonParamsFor(op, Problem(op, {8192, 4096}, kernels::Dtype::kF32));
  EXPECT_EQ(params[2].type, "*fp32");
  EXPECT_TRUE(params[4].div16);
  const kernels::OpDef& sum = Op("reduce_sum");  // a fixed f32 output
  params = TritonParamsFor(sum, Problem(sum, std::vector<int64_t>(sum.dims.size(), 64), kernels::Dtype::kBF16));
  EXPECT_EQ(params[0].type, "*bf16");
  EXPECT_EQ(params[1].type, "*fp32");
  // An E4M3 output is Triton's float8e4nv, so a kernel can store `.to(tl.float8e4nv)` into it.
  const kernels::OpDef& quant = Op("rmsnorm_fp8_quant");
  params = TritonParamsFor(quant, Problem(quant, {64, 512}, kernels::Dtype::kBF16));
  std::vector<std::string> types;
  for (const TritonParam& p : params) types.push_back(p.type);
  EXPECT_EQ(types, (std::vector<std::string>{"*bf16", "*bf16", "*fp8e4nv", "*fp32", "i64", "i64"}));
  // An op without a CUDA launch rule still has the contract's order: attention's tensors, then dims.
  const kernels::OpDef& attention = Op("attention");
  params = TritonParamsFor(attention, kernels::MakeProblem(attention, {2, 8, 2, 100, 333, 64}, kernels::Dtype::kF16, {"causal"}));
  std::vector<std::string> names;
  types.clear();
  for (const TritonParam& p : params) names.push_back(p.name), types.push_back(p.type);
  EXPECT_EQ(names, (std::vector<std::string>{"q", "k", "v", "o", "lse", "B", "H", "H_kv", "N_q", "N_kv", "d"}));
  EXPECT_EQ(types, (std::vector<std::string>{"*fp16", "*fp16", "*fp16", "*fp16", "*fp32", "i64", "i64", "i64", "i64", "i64", "i64"}));
  // do_not_specialize drops the divisibility hint of the dims it names, and only theirs.
  const kernels::Problem aligned = kernels::MakeProblem(attention, {16, 16, 16, 2048, 2048, 64}, kernels::Dtype::kBF16);
  params = TritonParamsFor(attention, aligned, {"N_q", "d"});
  std::vector<bool> hints;
  for (const TritonParam& p : params) hints.push_back(p.div16);
  EXPECT_EQ(hints, (std::vector<bool>{true, true, true, true, true, true, true, true, false, true, false}));
  // Where the op has a launch contract, the same names in the same order.
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops()) {
    const std::optional<v1::LaunchContract> contract = MakeLaunchContract(op);
    if (!contract) continue;
    params = TritonParamsFor(op, Problem(op, std::vector<int64_t>(op.dims.size(), 32), op.dtypes[0]));
    ASSERT_EQ(params.size(), static_cast<size_t>(contract->params_size())) << op.name;
    for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(params[i].name, contract->params(static_cast<int>(i)).name()) << op.name;
  }
}

TEST(TritonPrepare, DescriptionErrorsAreCompileErrors) {
  const TritonCapability present{.available = true, .python = "/nonexistent", .triton_version = "0"};
  const kernels::OpDef& op = Op("rmsnorm");
  TritonPrepared p = PrepareTriton(op, {"import triton\n", "my.py", "custom:mine"},
                                   Problem(op, {8, 64}, kernels::Dtype::kBF16), {.capability = &present});
  EXPECT_EQ(p.status, v1::COMPILE_ERROR);
  EXPECT_THAT(p.message, HasSubstr("my.py: no launch description"));
  // A dtype the description leaves out is SKIPPED before anything compiles.
  const std::string bf16_only = std::string(kRmsnorm) + "kbench_launch[\"dtypes\"] = []\n";
  p = PrepareTriton(op, {std::string(kRmsnorm).replace(std::string(kRmsnorm).find("\"num_stages\": 1}"), 16,
                                                       "\"num_stages\": 1, \"dtypes\": [\"bf16\"]}"),
                         "my.py", "custom:mine"},
                    Problem(op, {8, 64}, kernels::Dtype::kF32), {.capability = &present});
  EXPECT_EQ(p.status, v1::SKIPPED);
  EXPECT_THAT(p.message, HasSubstr("does not implement f32"));
}

#ifdef KBENCH_HAVE_CUDA
// Every Triton rung of the suite (a variant with a Python file), whichever op registers it.
std::vector<std::pair<const kernels::OpDef*, const kernels::Variant*>> SuiteTritonRungs() {
  std::vector<std::pair<const kernels::OpDef*, const kernels::Variant*>> rungs;
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops())
    for (const kernels::Variant& v : op.variants)
      if (!v.triton_source.empty()) rungs.emplace_back(&op, &v);
  return rungs;
}

TEST(TritonRungs, RegisteredWithReadableDescriptions) {
  std::set<std::string> found;
  for (const auto& [op, v] : SuiteTritonRungs()) {
    SCOPED_TRACE(v->name);
    found.insert(v->name);
    EXPECT_EQ(v->name, "triton_" + op->name);
    EXPECT_EQ(v->backend, kernels::Backend::kCuda);
    EXPECT_TRUE(static_cast<bool>(v->run_cuda));
    EXPECT_FALSE(v->dtypes.empty());
    absl::StatusOr<TritonLaunch> l = ParseTritonLaunch(v->triton_source, v->name + ".py");
    ASSERT_TRUE(l.ok()) << l.status();
    EXPECT_THAT(v->triton_source, HasSubstr("def " + l->kernel + "("));
    if (!l->dtypes.empty()) EXPECT_EQ(l->dtypes, v->dtypes);  // the file and the registration agree
    for (const TritonConfig& c : l->configs)
      EXPECT_TRUE(ResolveTritonLaunch(*l, c, op->presets[0].problems[0], op->flags).ok());
  }
  EXPECT_EQ(found, (std::set<std::string>{"triton_vector_add", "triton_rmsnorm", "triton_softmax", "triton_layernorm",
                                          "triton_gemm", "triton_attention", "triton_rmsnorm_fp8_quant"}));
}

// The attention rung's description: causal reaches the kernel as the constexpr CAUSAL, d as
// HEAD_DIM, and d = 256 (beyond its tiles) is SKIPPED with the reason before anything compiles.
TEST(TritonRungs, AttentionFlagsAndDims) {
  const TritonCapability present{.available = true, .python = "/nonexistent", .triton_version = "0"};
  const kernels::OpDef& op = Op("attention");
  const kernels::Variant* v = op.find_variant("triton_attention");
  ASSERT_NE(v, nullptr);
  absl::StatusOr<TritonLaunch> l = ParseTritonLaunch(v->triton_source, "attention_triton.py");
  ASSERT_TRUE(l.ok()) << l.status();
  auto constexpr_of = [&](const kernels::Problem& p, const std::string& name) -> int64_t {
    absl::StatusOr<ResolvedTritonLaunch> r = ResolveTritonLaunch(*l, l->configs[0], p, op.flags);
    EXPECT_TRUE(r.ok()) << r.status();
    for (const auto& [n, value] : r.ok() ? r->constexprs : std::vector<std::pair<std::string, int64_t>>{})
      if (n == name) return value;
    return -1;
  };
  const kernels::Problem causal = kernels::MakeProblem(op, {1, 4, 2, 96, 160, 128}, kernels::Dtype::kBF16, {"causal"});
  const kernels::Problem plain = kernels::MakeProblem(op, {1, 4, 2, 96, 160, 64}, kernels::Dtype::kF16);
  EXPECT_EQ(constexpr_of(causal, "CAUSAL"), 1);
  EXPECT_EQ(constexpr_of(plain, "CAUSAL"), 0);
  EXPECT_EQ(constexpr_of(causal, "HEAD_DIM"), 128);
  EXPECT_EQ(constexpr_of(plain, "HEAD_DIM"), 64);
  const TritonPrepared p =
      PrepareTriton(op, {v->triton_source, "attention_triton.py", v->name},
                    kernels::MakeProblem(op, {1, 2, 2, 130, 130, 256}, kernels::Dtype::kBF16, {"causal"}),
                    {.compute_capability = 90, .capability = &present});
  EXPECT_EQ(p.status, v1::SKIPPED);
  EXPECT_EQ(p.message, "triton_attention does not implement d = 256 (implemented: 64, 128)");
  // A "dims" entry naming no dim of the op is the file's error, not a skip.
  std::string source = v->triton_source;
  const std::string dims = "\"dims\": {\"d\"";
  ASSERT_NE(source.find(dims), std::string::npos);
  source.replace(source.find(dims), dims.size(), "\"dims\": {\"D\"");
  const TritonPrepared bad = PrepareTriton(op, {source, "a.py", "custom:a"}, plain, {.capability = &present});
  EXPECT_EQ(bad.status, v1::COMPILE_ERROR);
  EXPECT_THAT(bad.message, HasSubstr("dims: op 'attention' has no dim 'D'"));
  source = v->triton_source;
  const std::string last = "\"N_kv\", \"d\"]";
  ASSERT_NE(source.find(last), std::string::npos);
  source.replace(source.find(last), last.size(), "\"N_kv\", \"e\"]");
  const TritonPrepared bad_name = PrepareTriton(op, {source, "a.py", "custom:a"}, plain, {.capability = &present});
  EXPECT_EQ(bad_name.status, v1::COMPILE_ERROR);
  EXPECT_THAT(bad_name.message, HasSubstr("do_not_specialize: op 'attention' has no dim 'e'"));
}
#endif

// The rest needs Triton itself (scripts/install-deps.sh installs it); it compiles for sm_90 with no GPU.
class TritonCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!NodeTritonCapability().available) GTEST_SKIP() << "Triton is not installed here: " << NodeTritonCapability().reason;
    cache_dir_ = MakePrivateDir("tritoncache");
  }
  void TearDown() override {
    if (!cache_dir_.empty()) RemovePrivateDir(cache_dir_);
  }
  std::string cache_dir_;
};

TEST_F(TritonCompile, CompilesToACubinAndCaches) {
  const kernels::OpDef& op = Op("rmsnorm");
  KernelCache cache(cache_dir_);
  const kernels::Problem problem = Problem(op, {32, 4096}, kernels::Dtype::kBF16);
  TritonPrepared p = PrepareTriton(op, {kRmsnorm, "my.py", "custom:mine"}, problem, {.compute_capability = 90, .cache = &cache});
  ASSERT_EQ(p.status, v1::OK) << p.message;
  ASSERT_EQ(p.configs.size(), 1u);
  const TritonKernelImage& image = p.configs[0].image;
  EXPECT_EQ(image.cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(image.name, "my_rmsnorm");
  EXPECT_EQ(image.num_warps, 4);
  EXPECT_FALSE(image.cache_hit);
  EXPECT_GT(image.compile_ns, 0);
  EXPECT_EQ(p.configs[0].launch.constexprs[0], (std::pair<std::string, int64_t>{"BLOCK", 4096}));
  EXPECT_THAT(p.compiler, HasSubstr("triton "));
  EXPECT_FALSE(p.cache_hit);
  // The same shape class again (dims divisible by 16 as before): from the cache, no child started.
  TritonPrepared again = PrepareTriton(op, {kRmsnorm, "my.py", "custom:mine"}, Problem(op, {64, 4096}, kernels::Dtype::kBF16),
                                       {.compute_capability = 90, .cache = &cache});
  ASSERT_EQ(again.status, v1::OK) << again.message;
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.compile_ns, 0);
  EXPECT_EQ(again.configs[0].image.cubin, image.cubin);
  // Another dtype is another kernel.
  TritonPrepared f32 = PrepareTriton(op, {kRmsnorm, "my.py", "custom:mine"}, Problem(op, {64, 4096}, kernels::Dtype::kF32),
                                     {.compute_capability = 90, .cache = &cache});
  ASSERT_EQ(f32.status, v1::OK) << f32.message;
  EXPECT_FALSE(f32.cache_hit);
}

TEST_F(TritonCompile, CompileErrorsCarryTritonsMessage) {
  const kernels::OpDef& op = Op("rmsnorm");
  std::string broken = kRmsnorm;
  broken.replace(broken.find("tl.sum(v * v"), 7, "tl.summ(");
  TritonPrepared p = PrepareTriton(op, {broken, "my.py", "custom:mine"}, Problem(op, {8, 64}, kernels::Dtype::kBF16),
                                   {.compute_capability = 90});
  EXPECT_EQ(p.status, v1::COMPILE_ERROR);
  EXPECT_THAT(p.message, HasSubstr("summ"));
  EXPECT_THAT(p.message, HasSubstr("CompilationError"));
  // A Python syntax error names the user's file and line.
  p = PrepareTriton(op, {std::string(kRmsnorm) + "\ndef (\n", "my.py", "custom:mine"}, Problem(op, {8, 64}, kernels::Dtype::kBF16),
                    {.compute_capability = 90});
  EXPECT_EQ(p.status, v1::COMPILE_ERROR);
  EXPECT_THAT(p.message, HasSubstr("SyntaxError"));
  // A kernel whose parameters are not the contract's.
  std::string wrong = kRmsnorm;
  wrong.replace(wrong.find("out, rows"), 9, "out, rows, eps");
  p = PrepareTriton(op, {wrong, "my.py", "custom:mine"}, Problem(op, {8, 64}, kernels::Dtype::kBF16), {.compute_capability = 90});
  EXPECT_EQ(p.status, v1::COMPILE_ERROR);
  EXPECT_THAT(p.message, HasSubstr("takes 6 non-constexpr parameters"));
  EXPECT_THAT(p.message, HasSubstr("x, weight, out, rows, cols"));
  // No such kernel.
  std::string renamed = kRmsnorm;
  renamed.replace(renamed.find("\"kernel\": \"my_rmsnorm\""), 22, "\"kernel\": \"other\"");
  p = PrepareTriton(op, {renamed, "my.py", "custom:mine"}, Problem(op, {8, 64}, kernels::Dtype::kBF16), {.compute_capability = 90});
  EXPECT_EQ(p.status, v1::COMPILE_ERROR);
  EXPECT_THAT(p.message, HasSubstr("no @triton.jit function 'other' (found: my_rmsnorm)"));
}

TEST_F(TritonCompile, TimeLimitStopsTheCompile) {
  const kernels::OpDef& op = Op("rmsnorm");
  const std::string slow = std::string("import time\ntime.sleep(30)\n") + kRmsnorm;
  TritonPrepared p = PrepareTriton(op, {slow, "my.py", "custom:mine"}, Problem(op, {8, 64}, kernels::Dtype::kBF16),
                                   {.compute_capability = 90, .compile_limit = std::chrono::milliseconds(1500)});
  EXPECT_EQ(p.status, v1::COMPILE_ERROR);
  EXPECT_THAT(p.message, HasSubstr("time limit"));
}

#ifdef KBENCH_HAVE_CUDA
// Every config of every suite rung, for each dtype it implements, on each canonical problem (for
// attention: d 64 and 128, causal and not), compiles to a cubin for sm_90.
TEST_F(TritonCompile, EveryRungCompilesForSm90) {
  KernelCache cache(cache_dir_);
  const auto rungs = SuiteTritonRungs();
  EXPECT_GE(rungs.size(), 6u);
  for (const auto& [op, v] : rungs) {
    std::set<std::pair<int64_t, int64_t>> attention_kinds;  // (HEAD_DIM, CAUSAL) compiled
    for (kernels::Dtype dtype : v->dtypes) {
      for (const kernels::Problem& base : op->find_preset("canonical")->problems) {
        kernels::Problem problem = base;
        problem.dtype = dtype;
        SCOPED_TRACE(v->name + " " + problem.label());
        // A limit for a loaded 2-core machine (seven configs side by side), not the worker's 60 s: this
        // test is about what compiles, and the limit has its own test.
        TritonPrepared p = PrepareTriton(*op, {v->triton_source, v->name + ".py", v->name}, problem,
                                         {.compute_capability = 90, .cache = &cache,
                                          .compile_limit = std::chrono::minutes(10)});
        ASSERT_EQ(p.status, v1::OK) << p.message;
        EXPECT_EQ(p.configs.size(), ParseTritonLaunch(v->triton_source, "t.py")->configs.size());
        for (const PreparedConfig& c : p.configs) {
          EXPECT_EQ(c.image.cubin.substr(0, 4), "\x7f" "ELF");
          EXPECT_LE(c.image.shared_bytes, 227 * 1024);  // what one sm_90 block may use
          if (op->name == "attention") attention_kinds.insert({c.launch.constexprs[0].second, c.launch.constexprs[1].second});
        }
      }
    }
    if (op->name == "attention")
      EXPECT_EQ(attention_kinds, (std::set<std::pair<int64_t, int64_t>>{{64, 0}, {64, 1}, {128, 0}, {128, 1}}));
  }
}
#endif

}  // namespace
}  // namespace kbench::worker
