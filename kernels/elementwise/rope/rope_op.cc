// rope: rotary position embedding of q and k ([tokens, heads, head_dim], bf16), the step between the
// QKV projection and attention. Each token has a position (an i32 input); pair i of every head is
// rotated by angle(position, i) (rope_math.h), NeoX layout (pairs i, i + d/2) or GPT-J (flag gptj:
// pairs 2i, 2i + 1). cos and sin come from cos_sin_cache[position] = [cos_0..cos_{d/2-1} |
// sin_0..sin_{d/2-1}] (f32, one row per position, positions < tokens) or are computed (a rung).
//
// In place: the op models q_out and k_out as outputs (the suite poisons outputs and compares inputs
// untouched), and its cost counts q and k read once and written once, which is the traffic of the
// in-place kernel too; the CUDA rungs accept q_out == q and k_out == k (tests/gpu/quant_gpu_test.cc
// runs them so). The cache is not counted: a rung that computes cos/sin needs none of it.
//
// Beside this file: the reference (rope_ref.cc), the CPU rung (rope_cpu.cc) and the CUDA ladder
// (rope.cu; its header says what each rung teaches).
#include "elementwise/rope/rope.h"

#include <cmath>

#include "core/random.h"
#include "elementwise/rope/rope_math.h"

namespace kbench::kernels {
namespace {

// Positions uniform in [0, tokens): the cache has one row per position below tokens.
void FillPositions(const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream) {
  FillUniform(t, seed, stream, 0.0, static_cast<double>(std::max<int64_t>(p.dim("tokens"), 1)));
}

// cos_sin_cache[pos] = [cos(angle(pos, i)) | sin(angle(pos, i))], each rounded once to f32.
void FillCosSinCache(const Problem& p, const Tensor& t, uint64_t, uint64_t) {
  const int64_t rows = p.dim("tokens"), d = p.dim("head_dim"), half = d / 2;
  for (int64_t pos = 0; pos < rows; ++pos) {
    for (int64_t i = 0; i < half; ++i) {
      const double a = rope::Angle(static_cast<int>(pos), rope::InvFreq(static_cast<int>(i), static_cast<int>(d)));
      StoreFromDouble(t.data, t.dtype, pos * d + i, std::cos(a));
      StoreFromDouble(t.data, t.dtype, pos * d + half + i, std::sin(a));
    }
  }
}

}  // namespace

OpDef RopeDefinition() {
  OpDef op;
  op.name = "rope";
  op.description =
      "Rotary embedding of q[tokens,q_heads,head_dim] and k[tokens,kv_heads,head_dim] (bf16) at each token's "
      "position (i32, < tokens): pair (a, b) -> (a cos - b sin, b cos + a sin), NeoX pairs (i, i + d/2) or GPT-J "
      "(flag gptj) pairs (2i, 2i + 1); cos/sin from cos_sin_cache[position] (f32 [cos | sin]) or computed, "
      "theta 500000. Outputs q_out, k_out (rungs accept them aliasing q, k: in place). Cost: q and k read and "
      "written once, positions read once (the cache is not counted: computing rungs skip it); 3 FLOPs per element.";
  op.dims = {"tokens", "q_heads", "kv_heads", "head_dim"};
  op.zero_dims = {"tokens", "kv_heads"};  // the edge preset: no tokens; q without k
  op.dtypes = {Dtype::kBF16};
  op.flags = {"gptj"};
  op.tensors = {
      {.name = "q", .dims = {"tokens", "q_heads", "head_dim"}},
      {.name = "k", .dims = {"tokens", "kv_heads", "head_dim"}},
      {.name = "positions", .dims = {"tokens"}, .fixed_dtype = Dtype::kI32, .fill = FillPositions},
      {.name = "cos_sin_cache", .dims = {"tokens", "head_dim"}, .fixed_dtype = Dtype::kF32, .fill = FillCosSinCache},
      {.name = "q_out", .dims = {"tokens", "q_heads", "head_dim"}, .is_output = true},
      {.name = "k_out", .dims = {"tokens", "kv_heads", "head_dim"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const double tokens = static_cast<double>(p.dim("tokens")), d = static_cast<double>(p.dim("head_dim"));
    const double elems = tokens * static_cast<double>(p.dim("q_heads") + p.dim("kv_heads")) * d;
    return Cost{.bytes_read = elems * 2 + tokens * 4, .bytes_written = elems * 2, .flops = 3 * elems};
  };
  op.reference = RopeReference;
  op.tolerance = ElementwiseTolerance;
  op.validate = [](const Problem& p) -> std::string {
    for (const char* dim : {"tokens", "q_heads", "kv_heads", "head_dim"})
      if (p.dim(dim) < 0) return std::string(dim) + " must be >= 0";
    if (p.dim("head_dim") % 2 != 0) return "head_dim must be even (rotated pairs)";
    if (p.dim("head_dim") > 4096) return "head_dim must be <= 4096";
    return "";
  };
  const auto r = [&op](int64_t tokens, int64_t qh, int64_t kvh, int64_t d, std::vector<std::string> flags = {}) {
    return MakeProblem(op, {tokens, qh, kvh, d}, Dtype::kUnspecified, std::move(flags));
  };
  op.presets = {
      {"small", {r(64, 4, 2, 128), r(64, 4, 2, 128, {"gptj"})}},
      // Llama-3-8B: 32 query heads, 8 key/value heads, head_dim 128, at 8192 tokens.
      {"canonical", {r(8192, 32, 8, 128), r(8192, 32, 8, 128, {"gptj"})}},
      {"edge",
       {r(0, 32, 8, 128), r(1, 32, 8, 128), r(3, 3, 1, 64, {"gptj"}), r(5, 2, 2, 80), r(5, 2, 2, 80, {"gptj"}),
        r(2, 1, 1, 2), r(7, 5, 0, 128), r(4, 2, 1, 6, {"gptj"})}},
      {"quick", {r(16, 32, 8, 128), r(16, 32, 8, 128, {"gptj"})}},
      {"ci", {r(8192, 32, 8, 128)}},  // the PR gate: Llama-3-8B heads at 8192 tokens
  };
  return op;
}

OpDef MakeRopeOp() {
  OpDef op = RopeDefinition();
  AddRopeCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddRopeCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
