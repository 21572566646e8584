// References of attention (see attention_ref.h): fp64 on the stored inputs, and the plain
// same-precision implementation (f32 accumulation, S and P stored in the dtype).
#include "attention/attention/attention_ref.h"

#include <cmath>
#include <limits>

#include "core/cpu/parallel.h"

namespace kbench::kernels {
namespace {

std::vector<double> Widen(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel));
  for (int64_t i = 0; i < t.numel; ++i) out[i] = LoadAsDouble(t.data, t.dtype, i);
  return out;
}

std::vector<float> WidenF(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel));
  for (int64_t i = 0; i < t.numel; ++i) out[i] = static_cast<float>(LoadAsDouble(t.data, t.dtype, i));
  return out;
}

// Rounds a float to dtype d and back: what storing it in a tensor of d keeps.
float RoundTo(float v, Dtype d) {
  uint16_t h = 0;
  StoreFromDouble(&h, d, 0, v);
  return static_cast<float>(LoadAsDouble(&h, d, 0));
}

}  // namespace

AttentionShape ShapeOf(const Problem& p) {
  AttentionShape s{p.dim("B"), p.dim("H"), p.dim("H_kv"), p.dim("N_q"), p.dim("N_kv"), p.dim("d"), p.has_flag("causal")};
  s.scale = s.d > 0 ? 1.0 / std::sqrt(static_cast<double>(s.d)) : 1.0;
  return s;
}

void AttentionReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs) {
  const AttentionShape s = ShapeOf(p);
  const std::vector<double> q = Widen(inputs[0]), k = Widen(inputs[1]), v = Widen(inputs[2]);
  outputs.resize(2);
  outputs[0].assign(static_cast<size_t>(s.b * s.h * s.n_q * s.d), 0.0);
  outputs[1].assign(static_cast<size_t>(s.b * s.h * s.n_q), 0.0);
  // Query rows are independent: split them over the host's threads (the GPU tests check thousands
  // of rows of N = 4097 against it). Each row is summed in the same order whatever the split.
  cpu::ParallelFor(s.b * s.h * s.n_q, 16, [&](int64_t begin, int64_t end) {
    std::vector<double> scores(static_cast<size_t>(s.n_kv));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row % s.n_q, bh = row / s.n_q;
      const int64_t kv_head = (bh / s.h) * s.h_kv + (bh % s.h) / s.group();
      const double* kh = k.data() + kv_head * s.n_kv * s.d;
      const double* vh = v.data() + kv_head * s.n_kv * s.d;
      const double* qi = q.data() + row * s.d;
      const int64_t keys = s.VisibleKeys(i);
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < s.d; ++c) dot += qi[c] * kh[j * s.d + c];
        scores[j] = dot * s.scale;
        m = std::max(m, scores[j]);
      }
      double l = 0;
      double* o = outputs[0].data() + row * s.d;
      for (int64_t j = 0; j < keys; ++j) {
        const double e = std::exp(scores[j] - m);
        l += e;
        for (int64_t c = 0; c < s.d; ++c) o[c] += e * vh[j * s.d + c];
      }
      for (int64_t c = 0; c < s.d; ++c) o[c] /= l;
      outputs[1][row] = m + std::log(l);
    }
  });
}

void AttentionPlain(const Problem& p, std::span<const Tensor> t) {
  const AttentionShape s = ShapeOf(p);
  const Dtype dt = p.dtype;
  const std::vector<float> q = WidenF(t[0]), k = WidenF(t[1]), v = WidenF(t[2]);
  const float scale = static_cast<float>(s.scale);
  std::vector<float> sc(static_cast<size_t>(s.n_kv)), acc(static_cast<size_t>(s.d));
  for (int64_t b = 0; b < s.b; ++b)
    for (int64_t h = 0; h < s.h; ++h) {
      const int64_t kv_head = b * s.h_kv + h / s.group();
      const float* kh = k.data() + kv_head * s.n_kv * s.d;
      const float* vh = v.data() + kv_head * s.n_kv * s.d;
      for (int64_t i = 0; i < s.n_q; ++i) {
        const int64_t row = (b * s.h + h) * s.n_q + i;
        const float* qi = q.data() + row * s.d;
        const int64_t keys = s.VisibleKeys(i);
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < keys; ++j) {
          float dot = 0;
          for (int64_t c = 0; c < s.d; ++c) dot += qi[c] * kh[j * s.d + c];
          sc[j] = RoundTo(dot * scale, dt);  // S stored in the dtype
          m = std::max(m, sc[j]);
        }
        float l = 0;
        for (int64_t j = 0; j < keys; ++j) l += std::exp(sc[j] - m);
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t j = 0; j < keys; ++j) {
          const float pj = RoundTo(std::exp(sc[j] - m) / l, dt);  // P stored in the dtype
          for (int64_t c = 0; c < s.d; ++c) acc[c] += pj * vh[j * s.d + c];
        }
        for (int64_t c = 0; c < s.d; ++c) StoreFromDouble(t[3].data, t[3].dtype, row * s.d + c, acc[c]);
        StoreFromDouble(t[4].data, t[4].dtype, row, m + std::log(l));
      }
    }
}

}  // namespace kbench::kernels
