// CPU rung of paged_decode.
//   cpu_plain  the plain same-precision implementation the tolerance is measured against: per
//              (sequence, query head) every score in float (a sequential 128-term dot product), the
//              softmax in float, P V accumulated in float, out rounded to bf16 once. Two passes
//              over the context's K (scores) and V; (sequence, head) pairs over every host thread.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention/paged_decode/paged_decode.h"
#include "core/cpu/parallel.h"
#include "core/cpu/variant.h"

namespace kbench::kernels {
namespace {

void RunPlain(const Problem& p, std::span<const Tensor> t) {
  using namespace paged_decode;
  const Shape s = ShapeOf(p);
  const auto* q = static_cast<const uint16_t*>(t[kQ].data);
  const auto* k = static_cast<const uint16_t*>(t[kKCache].data);
  const auto* v = static_cast<const uint16_t*>(t[kVCache].data);
  const auto* table = static_cast<const int32_t*>(t[kBlockTable].data);
  const auto* lens = static_cast<const int32_t*>(t[kContextLens].data);
  auto* out = static_cast<uint16_t*>(t[kOut].data);
  const int64_t d = s.head_dim, group = s.group();
  const float scale = static_cast<float>(SoftmaxScale(s));
  cpu::ParallelFor(s.batch * s.heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qv(static_cast<size_t>(d)), scores, acc(static_cast<size_t>(d));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads, kvh = h / group, len = lens[b];
      for (int64_t i = 0; i < d; ++i) qv[i] = Bf16ToFloat(q[bh * d + i]);
      const auto row = [&](int64_t tok) {
        const int64_t page = table[b * s.max_pages + tok / s.page];
        return ((page * s.page + tok % s.page) * s.kv_heads + kvh) * d;
      };
      scores.assign(static_cast<size_t>(len), 0.0f);
      float m = -INFINITY;
      for (int64_t tok = 0; tok < len; ++tok) {
        const int64_t r = row(tok);
        float dot = 0;
        for (int64_t i = 0; i < d; ++i) dot += qv[i] * Bf16ToFloat(k[r + i]);
        scores[tok] = dot * scale;
        m = std::max(m, scores[tok]);
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      float l = 0;
      for (int64_t tok = 0; tok < len; ++tok) {
        const float w = std::exp(scores[tok] - m);
        l += w;
        const int64_t r = row(tok);
        for (int64_t i = 0; i < d; ++i) acc[i] += w * Bf16ToFloat(v[r + i]);
      }
      for (int64_t i = 0; i < d; ++i) out[bh * d + i] = FloatToBf16(acc[i] / l);
    }
  });
}

}  // namespace

void AddPagedDecodeCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(op, "cpu_plain",
                                  "Float scores, softmax and P V per (sequence, head); the tolerance's yardstick.",
                                  RunPlain);
  v.dtypes = {Dtype::kBF16};
  v.is_baseline = true;
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
