// paged_decode: one new token per sequence attends to its sequence's KV cache, which lives in
// fixed-size pages scattered through one pool (vLLM's PagedAttention). For each sequence b and
// query head h (KV head h / (H / H_kv), grouped-query attention):
//   out[b,h,:] = softmax_t(q[b,h,:] . K_t / sqrt(d)) V_t   over the sequence's tokens t,
// token t of sequence b being row (t % page) of page block_table[b, t / page]. Every byte of the
// context's K and V is read once and used for a handful of FLOPs (2 per element and query head):
// the op is memory-bound, and the ladder is about keeping HBM busy (split-KV) and reading each KV
// byte once for the whole query group (GQA), chapter 8 of the series. Paging changes addresses, not
// bytes.
//
// Layouts: q, out [batch, H, d]; k_cache, v_cache [num_pages, page, H_kv, d] (vLLM's and
// FlashInfer's "NHD" pages: one token's heads contiguous); block_table [batch, max_pages] i32, the
// pages of each sequence drawn from one seeded shuffle of the pool, -1 past a sequence's last page;
// context_lens [batch] i32. KV, q and out in bf16, all arithmetic in float.
//
// Beside this file: the fp64 references (paged_decode_ref.cc, paged_decode_reference.cu), the CPU
// rung (paged_decode_cpu.cc) and the CUDA ladder (paged_decode.cu; its header says what each rung
// teaches). MakePagedDecodeOp below assembles them.
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attention/paged_decode/paged_decode.h"
#include "attention/paged_decode/paged_decode_ref.h"
#include "core/cpu/parallel.h"
#include "core/random.h"

namespace kbench::kernels {
namespace paged_decode {

Shape ShapeOf(const Problem& p) {
  return Shape{.batch = p.dim("batch"), .heads = p.dim("H"), .kv_heads = p.dim("H_kv"), .head_dim = p.dim("d"),
               .page = p.dim("page"), .context = p.dim("context"), .long_context = p.dim("long_context"),
               .num_pages = p.dim("num_pages"), .max_pages = p.dim("max_pages")};
}

double SoftmaxScale(const Shape& s) { return 1.0 / std::sqrt(static_cast<double>(s.head_dim)); }

namespace {

// The pool's pages in a seeded random order; sequence b takes the next pages(b) of them, so a
// sequence's pages are neither contiguous nor ordered (what a cache looks like after hours of serving).
void FillBlockTable(const Problem& p, const Tensor& t, uint64_t seed, uint64_t stream) {
  const Shape s = ShapeOf(p);
  std::vector<int32_t> perm(static_cast<size_t>(s.num_pages));
  std::iota(perm.begin(), perm.end(), 0);
  uint64_t state = SplitMix64(seed * 0x100000001b3ull ^ SplitMix64(stream));
  for (int64_t i = s.num_pages - 1; i > 0; --i) {
    state = SplitMix64(state);
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(state % static_cast<uint64_t>(i + 1))]);
  }
  auto* table = static_cast<int32_t*>(t.data);
  int64_t next = 0;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t j = 0; j < s.max_pages; ++j)
      table[b * s.max_pages + j] = j < s.pages(b) ? perm[static_cast<size_t>(next++)] : -1;
}

// The lengths the problem names (its label shows them); the seed does not change them.
void FillContextLens(const Problem& p, const Tensor& t, uint64_t, uint64_t) {
  const Shape s = ShapeOf(p);
  for (int64_t b = 0; b < s.batch; ++b) static_cast<int32_t*>(t.data)[b] = static_cast<int32_t>(s.len(b));
}

// Uniform bf16 in [-1, 1] on every host thread: a decode preset's cache is up to 4.3 G elements, too
// many for the one-thread uniform fill. Element i depends only on (seed, stream, i).
void FillCache(const Problem&, const Tensor& t, uint64_t seed, uint64_t stream) {
  const uint64_t base = SplitMix64(seed * 0x100000001b3ull ^ SplitMix64(stream));
  cpu::ParallelFor(t.numel, int64_t{1} << 20, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double u = static_cast<double>(SplitMix64(base + static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
      double v = 2.0 * u - 1.0;
      if (v == 0.0) v = 1e-3;  // never an exact zero, as FillUniform
      if (t.dtype == Dtype::kBF16) static_cast<uint16_t*>(t.data)[i] = FloatToBf16(static_cast<float>(v));
      else StoreFromDouble(t.data, t.dtype, i, v);
    }
  });
}

std::string Validate(const Problem& p) {
  const Shape s = ShapeOf(p);
  if (s.batch < 1) return "batch must be >= 1";
  if (s.heads < 1 || s.kv_heads < 1) return "H and H_kv must be >= 1";
  if (s.heads % s.kv_heads != 0)
    return "H_kv must divide H (H = " + std::to_string(s.heads) + ", H_kv = " + std::to_string(s.kv_heads) + ")";
  if (s.head_dim != 128) return "d must be 128 (the head size of the rungs), got " + std::to_string(s.head_dim);
  if (s.page < 1) return "page must be >= 1";
  if (s.context < 1) return "context must be >= 1 (the new token attends at least to itself)";
  if (s.long_context < 0) return "long_context must be >= 0 (0: every sequence holds context tokens)";
  if (s.max_pages < (s.max_len() + s.page - 1) / s.page)
    return "max_pages must be >= ceil(max(context, long_context) / page) = " +
           std::to_string((s.max_len() + s.page - 1) / s.page);
  if (s.num_pages < s.total_pages())
    return "num_pages must be >= the pages the batch holds, " + std::to_string(s.total_pages());
  if (s.num_pages > (int64_t{1} << 31) - 1) return "num_pages must fit an i32 page id";
  return "";
}

}  // namespace
}  // namespace paged_decode

OpDef PagedDecodeDefinition() {
  using paged_decode::Shape;
  using paged_decode::ShapeOf;
  OpDef op;
  op.name = "paged_decode";
  op.description =
      "Decode attention over a paged KV cache: out[b,h] = softmax(q[b,h] K^T / sqrt(d)) V over sequence b's tokens, "
      "K and V rows found through block_table (pages of a shuffled pool); GQA: query head h reads KV head h/(H/H_kv). "
      "Sequence 0 holds long_context tokens when > 0, the others context. bf16 in and out, float arithmetic. "
      "Cost: the context's K and V rows, q, the used block-table entries, context_lens read once, out written once; "
      "4*d FLOPs per (token, query head).";
  op.dims = {"batch", "H", "H_kv", "d", "page", "context", "long_context", "num_pages", "max_pages"};
  // Left out, the pool is exactly the pages the batch holds (sequence 0: long_context tokens when > 0).
  op.derived_dims = {
      {"num_pages",
       "cdiv(context + min(long_context, 1) * (long_context - context), page) + (batch - 1) * cdiv(context, page)"},
      {"max_pages", "cdiv(max(context, long_context), page)"}};
  op.zero_dims = {"long_context"};
  op.dtypes = {Dtype::kBF16};
  op.tensors = {
      // q wider than K: scores spread over several units, so the softmax is peaked and a rung that
      // mixes up tokens or heads cannot hide behind a near-uniform average.
      {.name = "q", .dims = {"batch", "H", "d"}, .init_lo = -5.0, .init_hi = 5.0},
      {.name = "k_cache", .dims = {"num_pages", "page", "H_kv", "d"}, .fill = paged_decode::FillCache},
      {.name = "v_cache", .dims = {"num_pages", "page", "H_kv", "d"}, .fill = paged_decode::FillCache},
      {.name = "block_table", .dims = {"batch", "max_pages"}, .fixed_dtype = Dtype::kI32,
       .fill = paged_decode::FillBlockTable},
      {.name = "context_lens", .dims = {"batch"}, .fixed_dtype = Dtype::kI32, .fill = paged_decode::FillContextLens},
      {.name = "out", .dims = {"batch", "H", "d"}, .is_output = true},
  };
  op.cost = [](const Problem& p) {
    const Shape s = ShapeOf(p);
    const double e = static_cast<double>(DtypeBytes(p.dtype));
    // Only the rows of tokens in context: a partly filled last page is not read past its last token.
    const double kv = 2.0 * static_cast<double>(s.total_tokens()) * s.kv_heads * s.head_dim * e;
    const double q = static_cast<double>(s.batch) * s.heads * s.head_dim * e;
    const double tables = 4.0 * static_cast<double>(s.total_pages() + s.batch);
    return Cost{.bytes_read = kv + q + tables,
                .bytes_written = q,
                .flops = 4.0 * static_cast<double>(s.total_tokens()) * s.heads * s.head_dim,
                .unit = ComputeUnit::kFp32Fma};
  };
  op.reference = PagedDecodeReference;
  op.tolerance = PagedDecodeTolerance;
  op.validate = paged_decode::Validate;
  // batch, H, H_kv, page, context, long_context; d = 128; the pool holds exactly the batch's pages
  // plus `spare` that no sequence owns.
  const auto mk = [&op](int64_t batch, int64_t h, int64_t h_kv, int64_t page, int64_t context, int64_t long_context,
                        int64_t spare = 0) {
    Shape s{.batch = batch, .page = page, .context = context, .long_context = long_context};
    return MakeProblem(op, {batch, h, h_kv, 128, page, context, long_context, s.total_pages() + spare,
                            (s.max_len() + page - 1) / page});
  };
  Preset decode{"decode", {}};  // Llama-3-8B: 32 query heads, 8 KV heads, d 128, page 16
  for (int64_t batch : {1, 16, 64})
    for (int64_t context : {1024, 4096, 32768}) decode.problems.push_back(mk(batch, 32, 8, 16, context, 0));
  op.presets = {
      {"small", {mk(3, 8, 2, 16, 100, 0, 5), mk(2, 4, 4, 16, 40, 300, 3), mk(2, 8, 1, 16, 33, 0)}},
      decode,
      // One 32k sequence among 1k ones: a split plan sized by the longest sequence idles most blocks.
      {"skewed", {mk(16, 32, 8, 16, 1024, 32768), mk(64, 32, 8, 16, 1024, 32768)}},
      {"edge",
       {mk(2, 8, 2, 16, 1, 0, 4),         // a context of one token
        mk(2, 8, 2, 16, 64, 0),           // ending exactly on a page boundary
        mk(2, 8, 1, 16, 77, 0),           // MQA: H_kv = 1, a group of 8
        mk(2, 32, 1, 16, 70, 0),          // a group of 32, more than one block holds
        mk(1, 6, 2, 16, 129, 0),          // a group of 3 (not a power of two)
        mk(2, 4, 2, 1, 50, 0, 7),         // page 1: every token its own page
        mk(2, 4, 2, 256, 300, 0, 1),      // page 256, the last one partly filled
        mk(1, 4, 2, 256, 256, 0),         // page 256, full
        mk(3, 8, 2, 16, 1000, 4097)}},    // long enough to split across blocks, skewed
      {"quick", {mk(2, 8, 2, 16, 64, 200)}},
      {"ci", {mk(16, 32, 8, 16, 4096, 0)}},  // the PR gate: Llama-3-8B decode, batch 16, 4k context
  };
  return op;
}

OpDef MakePagedDecodeOp() {
  OpDef op = PagedDecodeDefinition();
  AddPagedDecodeCpuVariants(op);
#ifdef KBENCH_HAVE_CUDA
  AddPagedDecodeCudaVariants(op);
#endif
  return op;
}

}  // namespace kbench::kernels
