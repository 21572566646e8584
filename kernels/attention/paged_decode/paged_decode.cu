// paged_decode on CUDA: one query token per sequence against a paged bf16 KV cache, float
// arithmetic (paged_decode_op.cc has the math and the layouts). About 1 FLOP per byte of KV in MHA,
// G per byte with G query heads sharing a KV head: memory-bound, so the rungs differ in how many SMs
// stream KV at once and how many times each KV byte is read (chapter 8: paging changes addresses,
// not bytes; split-KV fills the SMs; only GQA and quantization cut bytes).
//
// All rungs share one kernel template (paged_decode_kernels.cuh: tiles of 64 tokens, a half-warp a
// token row, scores -> shared-memory softmax -> P V, fixed-order block sums).
// Rungs:
//   cuda_v1_paged         PagedAttention v1: one 128-thread block per (sequence, query head), the
//                         grid (1, H, batch), walking the whole context through the block table.
//                         With batch x H blocks (32 at batch 1) most SMs idle on long contexts, and
//                         each KV byte is read once per query head of its group (G times).
//   cuda_v2_split_kv      flash-decoding: the context split into chunks across blocks, grid
//                         (splits, H, batch); each block writes an unnormalized partial with its
//                         (max, sum) and a second kernel merges a sequence's splits in split order
//                         (bitwise repeatable for a fixed split). The split (PlanSplits): the
//                         batch's work over one full wave of resident blocks (the occupancy API's
//                         blocks per SM x the SM count), chunks of at least 128 tokens that divide
//                         the longest sequence evenly, one chunk size for the batch so a skewed
//                         batch's long sequence takes more splits and the short ones fewer. The
//                         plan is reported in the result's kernel resources ("splits=S chunk=C").
//   cuda_v3_gqa_split_kv  v2 with the G query heads of a KV head in one block (up to 8; larger
//                         groups in blocks of 8): every K and V byte is read once for the group,
//                         G dot products and G accumulators per loaded element, the scores summed
//                         over a half-warp by a reduce-scatter. K and V tiles arrive through a
//                         2-stage cp.async ring in shared memory, the next tile in flight while
//                         this one is computed.
//   cuda_v4_gqa_mma       v3's grouping on tensor cores (paged_decode_mma.cuh): on CUDA cores every
//                         KV element costs a widening, G FMAs and a share of the score shuffles,
//                         and at G = 4 that instruction stream, not HBM, sets the pace. mma.sync
//                         m16n8k16 with the group's heads as rows (padding rows are free) does a
//                         16-token step's QK^T in 16 MMAs and its P V in 32 (P split into bf16 hi
//                         + lo, as accurate as float FMAs); each warp streams its own 16-token
//                         groups through its own 3-stage cp.async ring with no block barrier.
//                         The last block of a sequence's splits merges them (MergeIfLast, split
//                         order, the same bits as the merge kernel) instead of a second launch.
// Unaligned tensors (an offset view) run the same math with 2-byte loads and no ring.
#include <algorithm>
#include <string>
#include <vector>

#include "attention/paged_decode/paged_decode.h"
#include "attention/paged_decode/paged_decode_kernels.cuh"
#include "attention/paged_decode/paged_decode_mma.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/workspace.cuh"

namespace kbench::kernels {
namespace paged_decode {
namespace {

using cuda::CeilDiv;

constexpr int kMinChunk = 2 * kTile;
constexpr int kRingStages = 2;

enum class Rung { kV1, kV2, kV3, kV4 };

// Query heads a block takes: 1 (v1, v2) or the largest of 8, 4, 2, 1 that divides the group (v3, v4).
int HeadsPerBlock(Rung r, const Shape& s) {
  if (r == Rung::kV1 || r == Rung::kV2) return 1;
  for (int g : {8, 4, 2})
    if (s.group() % g == 0) return g;
  return 1;
}

struct SplitPlan {
  int chunk = 0;   // tokens a block covers
  int splits = 1;  // blocks a sequence takes at most
};

// From the problem (the host knows the lengths, as a serving engine does) and the blocks to aim for.
SplitPlan PlanSplits(Rung r, const Shape& s, int64_t target_blocks) {
  const int64_t max_len = s.max_len();
  SplitPlan plan;
  if (r == Rung::kV1) {
    plan.chunk = static_cast<int>(CeilDiv(max_len, kTile) * kTile);
    return plan;
  }
  const int64_t head_blocks = s.heads / HeadsPerBlock(r, s);
  const int64_t want = std::max<int64_t>(CeilDiv(head_blocks * s.total_tokens(), std::max<int64_t>(target_blocks, 1)), kMinChunk);
  // The longest sequence's splits, then the chunk that divides it evenly (no 64-token tail split).
  plan.splits = static_cast<int>(std::max<int64_t>(1, max_len / want));
  plan.chunk = static_cast<int>(CeilDiv(CeilDiv(max_len, plan.splits), kTile) * kTile);
  plan.splits = static_cast<int>(CeilDiv(max_len, plan.chunk));
  return plan;
}

bool Aligned(std::span<const Tensor> t) {
  return cuda::Aligned16(t[kQ].data) && cuda::Aligned16(t[kKCache].data) && cuda::Aligned16(t[kVCache].data);
}

using KernelFn = void (*)(DecodeArgs);

template <int kG>
KernelFn PickKernel(bool ring, bool aligned) {
  if (ring && aligned) return &PagedDecodeKernel<kG, kRingStages, true>;
  return aligned ? &PagedDecodeKernel<kG, 0, true> : &PagedDecodeKernel<kG, 0, false>;
}

template <int kG>
KernelFn PickRung(Rung r, bool aligned, bool group_in_page) {
  if (r == Rung::kV4 && aligned) {
    return group_in_page ? &PagedDecodeMmaKernel<kG, true> : &PagedDecodeMmaKernel<kG, false>;
  }
  return PickKernel<kG>(r == Rung::kV3, aligned);  // v4 on unaligned tensors: the CUDA-core kernel
}

// group_in_page: v4's 16-token groups each lie in one page (the page size is a multiple of 16).
KernelFn KernelFor(Rung r, int heads_per_block, bool aligned, bool group_in_page) {
  switch (heads_per_block) {
    case 8: return PickRung<8>(r, aligned, group_in_page);
    case 4: return PickRung<4>(r, aligned, group_in_page);
    case 2: return PickRung<2>(r, aligned, group_in_page);
    default: return PickRung<1>(r, aligned, group_in_page);
  }
}

int DynamicSmem(Rung r, bool aligned) {
  if (!aligned) return 0;
  return r == Rung::kV3 ? kRingStages * kStageBytes : r == Rung::kV4 ? kMmaSmem : 0;
}

// One full wave: the blocks the SMs hold at once (occupancy API), each with as many tokens as that
// leaves; more, shorter blocks would only add partials and block start-up latency. v4 on a batch of
// equal lengths aims at one block an SM instead: its four warps' cp.async rings (96 KB in flight)
// pull an SM's share of HBM alone, and a second resident block only adds a split, its partial and
// the merge at the kernel's tail (H200, batch 16 x 4k: 67.4-67.7 against 69.4-69.8 us). A skewed
// batch keeps the full wave: its blocks differ in length and share SMs, and the long sequence's
// blocks, twice as long, made the tail (64 x 1k + one 32k: 124.4-124.9 against 103.6-103.8 us).
int64_t TargetBlocks(bool one_per_sm, KernelFn kernel, int smem) {
  if (smem > 0 && cuda::AllowDynamicSmem(reinterpret_cast<const void*>(kernel), smem) != cudaSuccess) return 0;
  if (one_per_sm) {
    int sms = 0;
    return cuda::SmCount(&sms) == cudaSuccess ? sms : 0;
  }
  return cuda::ResidentBlocks(reinterpret_cast<const void*>(kernel), kThreads, smem);
}

struct Launch {
  KernelFn kernel = nullptr;
  int heads_per_block = 1, smem = 0;
  bool fused_merge = false;  // v4 on aligned tensors
  SplitPlan plan;
};

cudaError_t PlanLaunch(Rung r, const Shape& s, bool aligned, Launch* l) {
  l->heads_per_block = HeadsPerBlock(r, s);
  l->kernel = KernelFor(r, l->heads_per_block, aligned, s.page % kGroupTokens == 0);
  l->smem = DynamicSmem(r, aligned);
  l->fused_merge = r == Rung::kV4 && aligned;
  const bool equal_lengths = s.total_tokens() == s.batch * s.max_len();
  l->plan = PlanSplits(r, s, TargetBlocks(l->fused_merge && equal_lengths, l->kernel, l->smem));
  // The in-kernel merge stages each split's (max, sum, weight) of the block's heads, 12 bytes a
  // split a head, in the kernel's shared memory: past that, longer splits.
  const int64_t max_splits = kMmaSmem / (12 * l->heads_per_block);
  if (l->fused_merge && l->plan.splits > max_splits) {
    l->plan.chunk = static_cast<int>(CeilDiv(CeilDiv(s.max_len(), max_splits), kTile) * kTile);
    l->plan.splits = static_cast<int>(CeilDiv(s.max_len(), l->plan.chunk));
  }
  return cudaSuccess;
}

int Run(Rung r, const Problem& p, std::span<const Tensor> t, void* stream) {
  const Shape s = ShapeOf(p);
  const cudaStream_t st = cuda::AsStream(stream);
  Launch l;
  KB_CUDA_TRY(PlanLaunch(r, s, Aligned(t), &l));
  const SplitPlan& plan = l.plan;
  const int g = l.heads_per_block;
  DecodeArgs a{};
  a.q = static_cast<const __nv_bfloat16*>(t[kQ].data);
  a.k = static_cast<const __nv_bfloat16*>(t[kKCache].data);
  a.v = static_cast<const __nv_bfloat16*>(t[kVCache].data);
  a.block_table = static_cast<const int32_t*>(t[kBlockTable].data);
  a.lens = static_cast<const int32_t*>(t[kContextLens].data);
  a.out = static_cast<__nv_bfloat16*>(t[kOut].data);
  a.heads = static_cast<int>(s.heads), a.kv_heads = static_cast<int>(s.kv_heads), a.group = static_cast<int>(s.group());
  a.page = static_cast<int>(s.page), a.max_pages = static_cast<int>(s.max_pages);
  a.page_shift = (s.page & (s.page - 1)) == 0 ? __builtin_ctzll(static_cast<unsigned long long>(s.page)) : -1;
  a.chunk = plan.chunk, a.splits = plan.splits;
  a.scale_log2 = static_cast<float>(SoftmaxScale(s) * 1.4426950408889634);
  if (plan.splits > 1) {
    const size_t rows = static_cast<size_t>(s.batch * s.heads) * plan.splits;
    void* ws = nullptr;
    KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kPagedDecodePartials,
                                   rows * (kHeadDim * sizeof(float) + sizeof(float2)), st, &ws));
    a.part_o = static_cast<float*>(ws);
    a.part_ml = reinterpret_cast<float2*>(a.part_o + rows * kHeadDim);
    if (l.fused_merge) {
      // Counters in a buffer of their own: zero when allocated, left at zero by every launch.
      KB_CUDA_TRY(cuda::GetWorkspace(cuda::WorkspaceSlot::kPagedDecodeCounters,
                                     static_cast<size_t>(s.batch * (s.heads / g)) * sizeof(unsigned), st, &ws));
      a.counters = static_cast<unsigned*>(ws);
    }
  }
  if (l.smem > 0) KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(l.kernel), l.smem));
  const dim3 grid(static_cast<unsigned>(plan.splits), static_cast<unsigned>(s.heads / g), static_cast<unsigned>(s.batch));
  l.kernel<<<grid, kThreads, l.smem, st>>>(a);
  KB_LAUNCH_CHECK();
  if (plan.splits > 1 && !l.fused_merge) {
    PagedDecodeMerge<<<dim3(static_cast<unsigned>(s.heads), static_cast<unsigned>(s.batch)), kHeadDim, 0, st>>>(a);
    KB_LAUNCH_CHECK();
  }
  return 0;
}

// The kernels a rung launches on the problem (16-byte aligned tensors), with the split plan in the
// name: the result's kernel resources are where a result says how its work was divided.
std::vector<LaunchInfo> Launches(Rung r, const Problem& p) {
  Launch l;
  if (PlanLaunch(r, ShapeOf(p), true, &l) != cudaSuccess) return {};
  const std::string name = std::string(r == Rung::kV4 ? "PagedDecodeMmaKernel<heads" : "PagedDecodeKernel<heads") +
                           std::to_string(l.heads_per_block) + (r == Rung::kV3 ? ",cp.async" : "") + "> splits=" +
                           std::to_string(l.plan.splits) + " chunk=" + std::to_string(l.plan.chunk);
  std::vector<LaunchInfo> out = {{name, reinterpret_cast<const void*>(l.kernel), kThreads, l.smem}};
  if (l.plan.splits > 1 && !l.fused_merge)
    out.push_back({"PagedDecodeMerge", reinterpret_cast<const void*>(&PagedDecodeMerge), kHeadDim, 0});
  return out;
}

std::string Skip(const Problem& p) {
  if (p.dtype != Dtype::kBF16) return "bf16 only (the KV cache's dtype)";
  if (p.dim("d") != kHeadDim) return "d must be 128";
  return "";
}

Variant MakeRung(Rung r, std::string name, std::string description) {
  return Variant{
      .name = std::move(name),
      .description = std::move(description),
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .skip_reason = Skip,
      .run_cuda = [r](const Problem& p, std::span<const Tensor> t, void* s) { return Run(r, p, t, s); },
      .launches = [r](const Problem& p) { return Launches(r, p); },
  };
}

}  // namespace

int RunReferenceF64(const Problem& p, std::span<const Tensor> inputs, std::span<double* const> outputs, void* stream);

}  // namespace paged_decode

void AddPagedDecodeCudaVariants(OpDef& op) {
  using paged_decode::MakeRung;
  using paged_decode::Rung;
  op.gpu_reference = paged_decode::RunReferenceF64;
  op.variants.push_back(MakeRung(Rung::kV1, "cuda_v1_paged",
                                 "PagedAttention v1: a block per (sequence, query head) walks the whole context."));
  op.variants.push_back(MakeRung(Rung::kV2, "cuda_v2_split_kv",
                                 "Flash-decoding: the context split across blocks (splits from the SM count and the "
                                 "batch, in the kernel name), partials merged in a fixed order."));
  op.variants.push_back(MakeRung(Rung::kV3, "cuda_v3_gqa_split_kv",
                                 "v2 with a KV head's query heads in one block (each KV byte read once for the "
                                 "group), K/V tiles through a cp.async ring."));
  op.variants.push_back(MakeRung(Rung::kV4, "cuda_v4_gqa_mma",
                                 "v3 on tensor cores: the group's heads as MMA rows, P kept in registers (bf16 hi + "
                                 "lo), a cp.async ring per warp, no block barrier in the loop."));
}

}  // namespace kbench::kernels
