// References of attention_varlen (see attention_varlen.h): fp64 on the stored inputs, written for the
// packed layout directly, and the plain same-precision implementation, which is the attention op's
// AttentionPlain run on each sequence gathered into a batch of one (so both ops' CPU rungs and
// tolerances rest on the same code).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attention/attention/attention_ref.h"
#include "attention/attention_varlen/attention_varlen.h"
#include "core/cpu/parallel.h"

namespace kbench::kernels {
namespace {

using attention_varlen::Shape;

namespace av = attention_varlen;

std::vector<double> Widen(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel));
  for (int64_t i = 0; i < t.numel; ++i) out[i] = LoadAsDouble(t.data, t.dtype, i);
  return out;
}

const int32_t* Offsets(const Tensor& t) { return static_cast<const int32_t*>(t.data); }

}  // namespace

void AttentionVarlenReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const Shape s = av::VarlenShapeOf(p);
  const int64_t h_all = s.heads, d = s.head_dim, group = s.group();
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const std::vector<double> q = Widen(inputs[av::kQ]), k = Widen(inputs[av::kK]), v = Widen(inputs[av::kV]);
  const int32_t* cu_q = Offsets(inputs[av::kCuQ]);
  const int32_t* cu_k = Offsets(inputs[av::kCuK]);
  int64_t max_kv = 0;
  for (int64_t b = 0; b < s.seqs; ++b) max_kv = std::max<int64_t>(max_kv, cu_k[b + 1] - cu_k[b]);
  outputs.resize(2);
  outputs[0].assign(static_cast<size_t>(s.total_q * h_all * d), 0.0);
  outputs[1].assign(static_cast<size_t>(h_all * s.total_q), 0.0);
  // One (token, head) row at a time, split over the host's threads; each row summed in one order.
  cpu::ParallelFor(s.total_q * h_all, 16, [&](int64_t begin, int64_t end) {
    std::vector<double> scores(static_cast<size_t>(max_kv));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t t = row / h_all, h = row % h_all;
      const int64_t b = std::upper_bound(cu_q, cu_q + s.seqs + 1, static_cast<int32_t>(t)) - cu_q - 1;
      const int64_t i = t - cu_q[b], n_q = cu_q[b + 1] - cu_q[b], k0 = cu_k[b], n_kv = cu_k[b + 1] - k0;
      const int64_t keys = s.causal ? std::min(n_kv, i + n_kv - n_q + 1) : n_kv;
      const double* qi = q.data() + row * d;
      const auto key = [&](int64_t j) { return ((k0 + j) * s.kv_heads + h / group) * d; };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += qi[c] * k[key(j) + c];
        scores[j] = dot * scale;
        m = std::max(m, scores[j]);
      }
      double l = 0;
      double* o = outputs[0].data() + row * d;
      for (int64_t j = 0; j < keys; ++j) {
        const double e = std::exp(scores[j] - m);
        l += e;
        for (int64_t c = 0; c < d; ++c) o[c] += e * v[key(j) + c];
      }
      for (int64_t c = 0; c < d; ++c) o[c] /= l;
      outputs[1][h * s.total_q + t] = m + std::log(l);
    }
  });
}

void AttentionVarlenPlain(const Problem& p, std::span<const Tensor> t) {
  const Shape s = av::VarlenShapeOf(p);
  const int64_t h_all = s.heads, h_kv = s.kv_heads, d = s.head_dim;
  const size_t e = static_cast<size_t>(DtypeBytes(p.dtype));
  const auto* cu_q = Offsets(t[av::kCuQ]);
  const auto* cu_k = Offsets(t[av::kCuK]);
  const auto* q = static_cast<const unsigned char*>(t[av::kQ].data);
  const auto* k = static_cast<const unsigned char*>(t[av::kK].data);
  const auto* v = static_cast<const unsigned char*>(t[av::kV].data);
  auto* o = static_cast<unsigned char*>(t[av::kO].data);
  auto* lse = static_cast<float*>(t[av::kLse].data);
  for (int64_t b = 0; b < s.seqs; ++b) {
    const int64_t q0 = cu_q[b], n_q = cu_q[b + 1] - q0, k0 = cu_k[b], n_kv = cu_k[b + 1] - k0;
    if (n_q <= 0) continue;
    // Sequence b as the attention op's batch of one: q [1,H,n_q,d], k and v [1,H_kv,n_kv,d].
    Problem one{.dims = {{"B", 1}, {"H", h_all}, {"H_kv", h_kv}, {"N_q", n_q}, {"N_kv", n_kv}, {"d", d}},
                .dtype = p.dtype,
                .flags = p.flags};
    std::vector<unsigned char> sq(static_cast<size_t>(h_all * n_q * d) * e), sk(static_cast<size_t>(h_kv * n_kv * d) * e),
        sv(sk.size()), so(sq.size());
    std::vector<float> slse(static_cast<size_t>(h_all * n_q));
    const size_t row = static_cast<size_t>(d) * e;
    for (int64_t h = 0; h < h_all; ++h)
      for (int64_t i = 0; i < n_q; ++i) std::memcpy(&sq[(h * n_q + i) * row], q + ((q0 + i) * h_all + h) * row, row);
    for (int64_t h = 0; h < h_kv; ++h)
      for (int64_t j = 0; j < n_kv; ++j) {
        std::memcpy(&sk[(h * n_kv + j) * row], k + ((k0 + j) * h_kv + h) * row, row);
        std::memcpy(&sv[(h * n_kv + j) * row], v + ((k0 + j) * h_kv + h) * row, row);
      }
    const Tensor one_t[5] = {{sq.data(), h_all * n_q * d, p.dtype}, {sk.data(), h_kv * n_kv * d, p.dtype},
                             {sv.data(), h_kv * n_kv * d, p.dtype}, {so.data(), h_all * n_q * d, p.dtype},
                             {slse.data(), h_all * n_q, Dtype::kF32}};
    AttentionPlain(one, one_t);
    for (int64_t h = 0; h < h_all; ++h)
      for (int64_t i = 0; i < n_q; ++i) {
        std::memcpy(o + ((q0 + i) * h_all + h) * row, &so[(h * n_q + i) * row], row);
        lse[h * s.total_q + q0 + i] = slse[h * n_q + i];
      }
  }
}

}  // namespace kbench::kernels
