// The paged_decode op's functions and the problem facts every part of it shares: the dims, the
// length of each sequence (a function of the problem alone, so it shows in the result's label), and
// how many pages each sequence holds. The suite lists MakePagedDecodeOp (kernels/suite.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/op.h"

namespace kbench::kernels {

OpDef MakePagedDecodeOp();                   // paged_decode_op.cc: the op with every rung of this build
OpDef PagedDecodeDefinition();               // paged_decode_op.cc: the definition alone, no rungs
void AddPagedDecodeCpuVariants(OpDef& op);   // paged_decode_cpu.cc
void AddPagedDecodeCudaVariants(OpDef& op);  // paged_decode.cu; compiled only with CUDA

namespace paged_decode {

// Tensor order of the op: inputs, then the output.
enum TensorIndex { kQ = 0, kKCache = 1, kVCache = 2, kBlockTable = 3, kContextLens = 4, kOut = 5 };

// The problem's dims, by name. Sequence 0 holds long_context tokens when long_context > 0 (the
// skewed mix: one long sequence among short ones); every other sequence holds context tokens.
struct Shape {
  int64_t batch = 0, heads = 0, kv_heads = 0, head_dim = 0, page = 0, context = 0, long_context = 0,
          num_pages = 0, max_pages = 0;

  int64_t group() const { return kv_heads > 0 ? heads / kv_heads : 0; }  // query heads per KV head
  int64_t len(int64_t b) const { return b == 0 && long_context > 0 ? long_context : context; }
  int64_t pages(int64_t b) const { return page > 0 ? (len(b) + page - 1) / page : 0; }
  int64_t max_len() const { return std::max(context, long_context); }
  int64_t total_tokens() const {
    int64_t t = 0;
    for (int64_t b = 0; b < batch; ++b) t += len(b);
    return t;
  }
  int64_t total_pages() const {
    int64_t t = 0;
    for (int64_t b = 0; b < batch; ++b) t += pages(b);
    return t;
  }
};

Shape ShapeOf(const Problem& p);

// The softmax scale of every implementation: 1 / sqrt(head_dim).
double SoftmaxScale(const Shape& s);

}  // namespace paged_decode
}  // namespace kbench::kernels
