// The fp64 CPU reference of paged_decode (see paged_decode_ref.h).
#include "attention/paged_decode/paged_decode_ref.h"

#include <algorithm>
#include <cmath>

#include "attention/paged_decode/paged_decode.h"
#include "core/cpu/parallel.h"

namespace kbench::kernels {

void PagedDecodeReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  using namespace paged_decode;
  const Shape s = ShapeOf(p);
  const Tensor &q = inputs[kQ], &k = inputs[kKCache], &v = inputs[kVCache];
  const auto* table = static_cast<const int32_t*>(inputs[kBlockTable].data);
  const auto* lens = static_cast<const int32_t*>(inputs[kContextLens].data);
  const int64_t d = s.head_dim, group = s.group();
  const double scale = SoftmaxScale(s);
  outputs.resize(1);
  outputs[0].assign(static_cast<size_t>(s.batch * s.heads * d), 0.0);
  // One (sequence, head) a task; each writes its own row of out.
  cpu::ParallelFor(s.batch * s.heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> qv(static_cast<size_t>(d)), scores, acc(static_cast<size_t>(d));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads, kvh = h / group, len = lens[b];
      for (int64_t i = 0; i < d; ++i) qv[i] = LoadAsDouble(q.data, q.dtype, bh * d + i);
      const auto row = [&](int64_t t) {  // element offset of token t's row for this KV head
        const int64_t page = table[b * s.max_pages + t / s.page];
        return ((page * s.page + t % s.page) * s.kv_heads + kvh) * d;
      };
      scores.assign(static_cast<size_t>(len), 0.0);
      double m = -INFINITY;
      for (int64_t t = 0; t < len; ++t) {
        const int64_t r = row(t);
        double dot = 0;
        for (int64_t i = 0; i < d; ++i) dot += qv[i] * LoadAsDouble(k.data, k.dtype, r + i);
        scores[t] = dot * scale;
        m = std::max(m, scores[t]);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double l = 0;
      for (int64_t t = 0; t < len; ++t) {
        const double w = std::exp(scores[t] - m);
        l += w;
        const int64_t r = row(t);
        for (int64_t i = 0; i < d; ++i) acc[i] += w * LoadAsDouble(v.data, v.dtype, r + i);
      }
      for (int64_t i = 0; i < d; ++i) outputs[0][static_cast<size_t>(bh * d + i)] = acc[i] / l;
    }
  });
}

Tolerance PagedDecodeTolerance(Dtype d) {
  // bf16: the plain implementation's error is its output's rounding, at most half an ulp (2^-8
  // relative: 8 significant bits; 3.89e-3 measured), plus float accumulation far below it (3.1e-5
  // at most on outputs under 1e-2); twice that, and a floor for outputs near zero.
  switch (d) {
    case Dtype::kBF16: return {.rtol = 0x1.0p-7, .atol = 1e-4};
    default: return {.rtol = 1e-5, .atol = 1e-6};
  }
}

}  // namespace kbench::kernels
