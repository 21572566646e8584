// The attention_varlen op's functions and the problem facts every part of it shares: the dims, the
// length of each sequence (a function of the problem alone, so the result's label names the batch,
// as paged_decode's context lengths), and the unmasked pairs. The suite lists MakeAttentionVarlenOp
// (kernels/suite.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeAttentionVarlenOp();                   // attention_varlen_op.cc: the op with every rung of this build
OpDef AttentionVarlenDefinition();               // attention_varlen_op.cc: the definition alone, no rungs
void AddAttentionVarlenCpuVariants(OpDef& op);   // attention_varlen_cpu.cc
void AddAttentionVarlenCudaVariants(OpDef& op);  // attention_varlen.cu; compiled only with CUDA

namespace attention_varlen {

// Tensor order of the op: inputs, then outputs.
enum TensorIndex { kQ = 0, kK = 1, kV = 2, kCuQ = 3, kCuK = 4, kO = 5, kLse = 6 };

// The problem's dims, by name. Sequence b has q_len(b) new tokens (queries) and kv_len(b) = q_len(b)
// + prefix keys (a prefix already cached, as in chunked prefill; 0: self-attention). Sequence 0 holds
// first_len queries when first_len > 0 (one long sequence among short ones, or one of length 1);
// the others lengths in [len_lo, len_hi], picked by a fixed hash of b (not by the seed), so the
// batch is skewed but the same on every run. total_q, total_kv and offsets (= seqs + 1, the entries
// of each cu_seqlens tensor) size the tensors; validation checks them against the lengths.
struct Shape {
  int64_t seqs = 0, heads = 0, kv_heads = 0, head_dim = 0, len_lo = 0, len_hi = 0, first_len = 0, prefix = 0,
          total_q = 0, total_kv = 0, offsets = 0;
  bool causal = false;

  int64_t group() const { return kv_heads > 0 ? heads / kv_heads : 0; }  // query heads per KV head
  int64_t q_len(int64_t b) const;
  int64_t kv_len(int64_t b) const { return q_len(b) + prefix; }
  int64_t sum_q() const;
  int64_t sum_kv() const;
  int64_t max_q() const;
  // Unmasked query-key pairs of sequence b (one head): all, or under the causal mask aligned to the
  // bottom-right corner (query i sees keys j <= i + prefix).
  double pairs(int64_t b) const;
  double pairs() const;  // over the batch
};

Shape VarlenShapeOf(const Problem& p);

// The cumulative offsets the shape implies: {0, len(0), len(0) + len(1), ...}, seqs + 1 of them.
std::vector<int32_t> CuSeqlensQ(const Shape& s);
std::vector<int32_t> CuSeqlensK(const Shape& s);

}  // namespace attention_varlen

// fp64 reference (attention_varlen_ref.cc) on the stored inputs, reading the offsets from the
// cu_seqlens tensors as the kernels do: o [total_q, H, d], lse [H, total_q].
void AttentionVarlenReference(const Problem& p, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs);

// The plain same-precision implementation (the attention op's AttentionPlain, one sequence at a
// time): the CPU rung, and what the shared tolerance is built on. Writes o and lse.
void AttentionVarlenPlain(const Problem& p, std::span<const Tensor> t);

}  // namespace kbench::kernels
