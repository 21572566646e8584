// The Triton launch description (worker/triton/launch_description.h, py_literal.h): read without
// Python, its errors naming the file and line, and evaluated for problems (constexprs, next_pow2,
// grids over dims, flags and constexprs, CUDA's grid limits, the dims a kernel implements).
#include "worker/triton/launch_description.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "worker/triton/py_literal.h"

namespace kbench::worker {
namespace {

using ::testing::HasSubstr;

kernels::Problem RowsCols(int64_t rows, int64_t cols) {
  kernels::Problem p;
  p.dims = {{"rows", rows}, {"cols", cols}};
  p.dtype = kernels::Dtype::kBF16;
  return p;
}

TEST(PyLiteral, ReadsTheSubset) {
  size_t used = 0;
  absl::StatusOr<PyValue> v = ParsePyLiteral(
      "{'a': 1, \"b\": [1, -2, 'x'],  # comment\n 'c': (True, None, 2.5), 'd': {'e': 'f\\'g'},}\nrest", &used);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, PyValue::kDict);
  EXPECT_EQ(v->Get("a")->i, 1);
  ASSERT_EQ(v->Get("b")->items.size(), 3u);
  EXPECT_EQ(v->Get("b")->items[1].i, -2);
  EXPECT_EQ(v->Get("b")->items[2].s, "x");
  EXPECT_EQ(v->Get("c")->items[0].kind, PyValue::kBool);
  EXPECT_EQ(v->Get("c")->items[1].kind, PyValue::kNone);
  EXPECT_DOUBLE_EQ(v->Get("c")->items[2].f, 2.5);
  EXPECT_EQ(v->Get("d")->Get("e")->s, "f'g");
  EXPECT_EQ(v->Get("missing"), nullptr);
  EXPECT_EQ(std::string("{'a': 1, \"b\": [1, -2, 'x'],  # comment\n 'c': (True, None, 2.5), 'd': {'e': 'f\\'g'},}")
                .size(),
            used);
}

TEST(PyLiteral, ErrorsNameTheLine) {
  absl::StatusOr<PyValue> v = ParsePyLiteral("{\n 'a': 1,\n 'b' 2}", nullptr, 10);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("line 12"));
  EXPECT_THAT(v.status().message(), HasSubstr("expected ':'"));
  EXPECT_THAT(ParsePyLiteral("{'a': os.system('x')}", nullptr).status().message(), HasSubstr("only literals"));
  EXPECT_THAT(ParsePyLiteral("{1: 2}", nullptr).status().message(), HasSubstr("keys must be strings"));
  EXPECT_THAT(ParsePyLiteral("{'a': 1, 'a': 2}", nullptr).status().message(), HasSubstr("twice"));
  EXPECT_FALSE(ParsePyLiteral("[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", nullptr).ok());
  EXPECT_FALSE(ParsePyLiteral("{'a': 'open", nullptr).ok());
}

constexpr char kRmsnormFile[] = R"PY(import triton
import triton.language as tl

@triton.jit
def my_kernel(x, weight, out, rows, cols, BLOCK: tl.constexpr):
    pass

  kbench_launch = "indented: not the module-level one"
kbench_launch = {
    "kernel": "my_kernel",
    "grid": ["rows"],          # one program per row
    "constexprs": {"BLOCK": "min(next_pow2(cols), 8192)", "TWICE": "BLOCK * 2", "FLAG": True},
    "num_warps": 8,
    "num_stages": 1,
    "dtypes": ["bf16"],
}
)PY";

TEST(TritonLaunch, ParsesAndResolves) {
  absl::StatusOr<TritonLaunch> l = ParseTritonLaunch(kRmsnormFile, "my.py");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->kernel, "my_kernel");
  EXPECT_EQ(l->grid, (std::vector<std::string>{"rows"}));
  ASSERT_EQ(l->configs.size(), 1u);
  EXPECT_EQ(l->configs[0].num_warps, 8);
  EXPECT_EQ(l->configs[0].num_stages, 1);
  EXPECT_EQ(l->dtypes, (std::vector<kernels::Dtype>{kernels::Dtype::kBF16}));

  absl::StatusOr<ResolvedTritonLaunch> r = ResolveTritonLaunch(*l, l->configs[0], RowsCols(769, 5125));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->grid, (std::array<int64_t, 3>{769, 1, 1}));
  using C = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(r->constexprs, (C{{"BLOCK", 8192}, {"TWICE", 16384}, {"FLAG", 1}}));
  r = ResolveTritonLaunch(*l, l->configs[0], RowsCols(3, 7));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constexprs[0].second, 8);
  r = ResolveTritonLaunch(*l, l->configs[0], RowsCols(3, 100000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constexprs[0].second, 8192);
  EXPECT_EQ(l->configs[0].Label(r->constexprs), "BLOCK=8192 TWICE=16384 FLAG=1 num_warps=8 num_stages=1");
  r = ResolveTritonLaunch(*l, l->configs[0], RowsCols(0, 64));  // an empty problem: no launch
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->grid[0], 0);
}

TEST(TritonLaunch, ConfigsInheritTheTopLevel) {
  absl::StatusOr<TritonLaunch> l = ParseTritonLaunch(R"PY(
kbench_launch = {
    "grid": ["cdiv(M, BM) * cdiv(N, BN)"],
    "constexprs": {"GROUP": 8}, "num_warps": 4,
    "configs": [{"constexprs": {"BM": 128, "BN": 256}, "num_warps": 8, "num_stages": 3},
                {"constexprs": {"BM": 64, "BN": 64, "GROUP": 4}}],
})PY",
                                                     "gemm.py");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(l->kernel.empty());
  ASSERT_EQ(l->configs.size(), 2u);
  kernels::Problem p;
  p.dims = {{"M", 4096}, {"N", 4099}, {"K", 64}};
  absl::StatusOr<ResolvedTritonLaunch> a = ResolveTritonLaunch(*l, l->configs[0], p);
  absl::StatusOr<ResolvedTritonLaunch> b = ResolveTritonLaunch(*l, l->configs[1], p);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->grid[0], 32 * 17);
  EXPECT_EQ(a->num_warps, 8);
  EXPECT_EQ(b->grid[0], 64 * 65);
  EXPECT_EQ(b->num_warps, 4);
  EXPECT_EQ(b->num_stages, 3);  // the default
  EXPECT_EQ(l->configs[1].Label(b->constexprs), "GROUP=4 BM=64 BN=64 num_warps=4 num_stages=3");
}

// The attention rung's shape of description: a flag is a constexpr (1 set, 0 not), "dims" limits d.
constexpr char kAttentionFile[] = R"PY(
kbench_launch = {
    "grid": ["cdiv(N_q, BLOCK_M)", "B * H"],
    "constexprs": {"HEAD_DIM": "d", "CAUSAL": "causal", "BLOCK_M": "64 * (1 + causal)"},
    "dims": {"d": [64, 128]},
})PY";

kernels::Problem Attention(int64_t n_q, int64_t d, std::vector<std::string> flags) {
  kernels::Problem p;
  p.dims = {{"B", 2}, {"H", 8}, {"H_kv", 2}, {"N_q", n_q}, {"N_kv", n_q}, {"d", d}};
  p.dtype = kernels::Dtype::kBF16;
  p.flags = std::move(flags);
  return p;
}

TEST(TritonLaunch, FlagsAreOneOrZero) {
  absl::StatusOr<TritonLaunch> l = ParseTritonLaunch(kAttentionFile, "attention.py");
  ASSERT_TRUE(l.ok()) << l.status();
  const std::vector<std::string> op_flags = {"causal"};
  absl::StatusOr<ResolvedTritonLaunch> causal = ResolveTritonLaunch(*l, l->configs[0], Attention(1000, 128, {"causal"}), op_flags);
  ASSERT_TRUE(causal.ok()) << causal.status();
  EXPECT_EQ(causal->constexprs, (std::vector<std::pair<std::string, int64_t>>{{"HEAD_DIM", 128}, {"CAUSAL", 1}, {"BLOCK_M", 128}}));
  EXPECT_EQ(causal->grid, (std::array<int64_t, 3>{8, 16, 1}));
  absl::StatusOr<ResolvedTritonLaunch> plain = ResolveTritonLaunch(*l, l->configs[0], Attention(1000, 64, {}), op_flags);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->constexprs, (std::vector<std::pair<std::string, int64_t>>{{"HEAD_DIM", 64}, {"CAUSAL", 0}, {"BLOCK_M", 64}}));
  EXPECT_EQ(plain->grid[0], 16);
  // A name that is neither a dim, a constexpr nor one of the op's flags is still an error.
  absl::StatusOr<ResolvedTritonLaunch> unknown = ResolveTritonLaunch(*l, l->configs[0], Attention(1000, 64, {}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("constexpr CAUSAL = causal"));
}

TEST(TritonLaunch, DimsLimitWhatTheKernelImplements) {
  absl::StatusOr<TritonLaunch> l = ParseTritonLaunch(kAttentionFile, "attention.py");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->dim_values.size(), 1u);
  EXPECT_EQ(UnimplementedDims(*l, Attention(130, 64, {})), "");
  EXPECT_EQ(UnimplementedDims(*l, Attention(130, 128, {"causal"})), "");
  EXPECT_EQ(UnimplementedDims(*l, Attention(130, 256, {"causal"})), "d = 256 (implemented: 64, 128)");
  auto error = [](const std::string& dims) {
    absl::StatusOr<TritonLaunch> l = ParseTritonLaunch("kbench_launch = {\"grid\": [\"N\"], \"dims\": " + dims + "}", "k.py");
    return l.ok() ? std::string("ok") : std::string(l.status().message());
  };
  EXPECT_THAT(error("[64]"), HasSubstr("dims must be a dict"));
  EXPECT_THAT(error("{\"d\": 64}"), HasSubstr("'d' must map to a list of ints"));
  EXPECT_THAT(error("{\"d\": []}"), HasSubstr("'d' must map to a list of ints"));
  EXPECT_THAT(error("{\"d\": [64, \"128\"]}"), HasSubstr("'d' must map to a list of ints"));
}

TEST(TritonLaunch, DoNotSpecialize) {
  absl::StatusOr<TritonLaunch> l =
      ParseTritonLaunch("kbench_launch = {\"grid\": [\"N\"], \"do_not_specialize\": [\"N_q\", \"N_kv\"]}", "k.py");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->do_not_specialize, (std::vector<std::string>{"N_q", "N_kv"}));
  for (const char* bad : {"\"N\"", "[1]", "[\"\"]"}) {
    l = ParseTritonLaunch(std::string("kbench_launch = {\"grid\": [\"N\"], \"do_not_specialize\": ") + bad + "}", "k.py");
    ASSERT_FALSE(l.ok()) << bad;
    EXPECT_THAT(l.status().message(), HasSubstr("do_not_specialize must be a list of dim names"));
  }
}

TEST(TritonLaunch, RefusesWithFileAndLine) {
  auto error = [](const std::string& text) {
    absl::StatusOr<TritonLaunch> l = ParseTritonLaunch(text, "k.py");
    return l.ok() ? std::string("ok") : std::string(l.status().message());
  };
  EXPECT_THAT(error("import triton\n"), HasSubstr("k.py: no launch description"));
  EXPECT_THAT(error("\n\nkbench_launch = {\"grid\": [\"rows\"], \"warps\": 4}"), HasSubstr("k.py(3): kbench_launch: unknown key 'warps'"));
  EXPECT_THAT(error("kbench_launch = {}"), HasSubstr("grid must be a list"));
  EXPECT_THAT(error("kbench_launch = {\"grid\": [\"rows +\"]}"), HasSubstr("grid:"));
  EXPECT_THAT(error("kbench_launch = {\"grid\": [\"rows\"], \"num_warps\": 3}"), HasSubstr("power of two"));
  EXPECT_THAT(error("kbench_launch = {\"grid\": [\"rows\"], \"dtypes\": [\"int4\"]}"), HasSubstr("dtypes"));
  EXPECT_THAT(error("kbench_launch = {\"grid\": [\"rows\"], \"constexprs\": {\"B\": [1]}}"), HasSubstr("constexpr 'B'"));
  EXPECT_THAT(error("kbench_launch = {\"grid\": [\"rows\"], \"configs\": []}"), HasSubstr("configs must be"));
  EXPECT_THAT(error("kbench_launch = {\"grid\": [\"rows\"],\n  \"kernel\": 3}"), HasSubstr("k.py(1)"));
  EXPECT_THAT(error("kbench_launch = make_launch()"), HasSubstr("only literals"));
}

TEST(TritonLaunch, ResolveErrors) {
  absl::StatusOr<TritonLaunch> l =
      ParseTritonLaunch("kbench_launch = {\"grid\": [\"rows * 1000000\", \"cols\"], \"constexprs\": {\"B\": \"depth\"}}", "k.py");
  ASSERT_TRUE(l.ok()) << l.status();
  absl::StatusOr<ResolvedTritonLaunch> r = ResolveTritonLaunch(*l, l->configs[0], RowsCols(8, 8));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("constexpr B = depth"));
  l = ParseTritonLaunch("kbench_launch = {\"grid\": [\"rows * 1000000\", \"cols\"]}", "k.py");
  ASSERT_TRUE(l.ok());
  r = ResolveTritonLaunch(*l, l->configs[0], RowsCols(4096, 8));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("grid[0]"));
  r = ResolveTritonLaunch(*l, l->configs[0], RowsCols(1, 70000));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("grid[1]"));
}

}  // namespace
}  // namespace kbench::worker
