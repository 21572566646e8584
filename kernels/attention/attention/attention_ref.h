// References of attention: the fp64 one every rung is checked against, and the "plain" implementation
// in the problem's precision whose error sets the tolerance (FlashAttention's test rule: a rung's
// largest error against fp64 may be at most twice the plain implementation's, plus a small floor).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

// The problem as the references and launchers see it. Keys j of query row i are visible when
// !causal or j <= i + (n_kv - n_q): the causal mask is aligned to the bottom-right corner, so the
// last query sees every key (the convention of FlashAttention 2.1+ for N_q != N_kv).
struct AttentionShape {
  int64_t b = 0, h = 0, h_kv = 0, n_q = 0, n_kv = 0, d = 0;
  bool causal = false;
  double scale = 1;  // 1/sqrt(d)

  int64_t group() const { return h / h_kv; }  // query heads per KV head
  // Keys [0, VisibleKeys(i)) are visible to query row i.
  int64_t VisibleKeys(int64_t i) const { return causal ? std::min(n_kv, i + n_kv - n_q + 1) : n_kv; }
};

AttentionShape ShapeOf(const Problem& p);

// inputs: q [B,H,N_q,d], k [B,H_kv,N_kv,d], v [B,H_kv,N_kv,d]; outputs: o [B,H,N_q,d] and
// lse [B,H,N_q] (natural log of the row's sum of exp(scale * q.k)), in double on the stored inputs.
void AttentionReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

// The plain implementation in the problem's dtype, as a framework's unfused path computes it: S =
// scale * Q K^T accumulated in f32 and stored in the dtype, softmax in f32 stored in the dtype (P),
// O = P V accumulated in f32 and stored in the dtype; LSE in f32 from the stored S. Writes o and lse
// (tensors 3 and 4). It is also the CPU rung cpu_naive.
void AttentionPlain(const Problem& p, std::span<const Tensor> t);

}  // namespace kbench::kernels
