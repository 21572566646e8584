// The paged_decode op (kernels/attention/paged_decode): its problem rules, cost model, input fills
// (a shuffled block table, the lengths the problem names), the fp64 reference on a worked example
// (pages out of order, GQA head mapping), and the CPU rung against the reference on the small, edge
// and ci presets.
#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "attention/paged_decode/paged_decode.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace kbench::kernels {
namespace {

using paged_decode::Shape;
using paged_decode::ShapeOf;
using testing::GetOp;

Problem Make(int64_t batch, int64_t h, int64_t h_kv, int64_t page, int64_t context, int64_t long_context,
             int64_t num_pages, int64_t max_pages, int64_t d = 128) {
  return MakeProblem(GetOp("paged_decode"), {batch, h, h_kv, d, page, context, long_context, num_pages, max_pages},
                     Dtype::kBF16);
}

TEST(PagedDecode, LengthsComeFromTheProblem) {
  const Shape s = ShapeOf(Make(4, 32, 8, 16, 1000, 32768, 2048 + 3 * 63, 2048));
  EXPECT_EQ(s.len(0), 32768);
  EXPECT_EQ(s.len(1), 1000);
  EXPECT_EQ(s.len(3), 1000);
  EXPECT_EQ(s.pages(0), 2048);
  EXPECT_EQ(s.pages(1), 63);  // 1000 / 16 = 62.5
  EXPECT_EQ(s.total_tokens(), 32768 + 3000);
  EXPECT_EQ(s.group(), 4);
}

TEST(PagedDecode, ValidateNamesTheField) {
  const OpDef& op = GetOp("paged_decode");
  EXPECT_EQ(op.validate(Make(2, 8, 2, 16, 100, 0, 14, 7)), "");
  EXPECT_NE(op.validate(Make(2, 8, 3, 16, 100, 0, 14, 7)).find("H_kv must divide H"), std::string::npos);
  EXPECT_NE(op.validate(Make(2, 8, 2, 16, 100, 0, 14, 7, 64)).find("d must be 128"), std::string::npos);
  EXPECT_NE(op.validate(Make(2, 8, 2, 16, 100, 0, 13, 7)).find("num_pages"), std::string::npos);
  EXPECT_NE(op.validate(Make(2, 8, 2, 16, 100, 0, 14, 6)).find("max_pages"), std::string::npos);
  EXPECT_NE(op.validate(Make(2, 8, 2, 16, 0, 0, 14, 7)).find("context"), std::string::npos);
  EXPECT_NE(op.validate(Make(2, 8, 2, 0, 100, 0, 14, 7)).find("page"), std::string::npos);
}

TEST(PagedDecode, PresetsAreValidAndDecodeIsLlama3) {
  const OpDef& op = GetOp("paged_decode");
  for (const Preset& preset : op.presets)
    for (const Problem& p : preset.problems) EXPECT_EQ(op.validate(p), "") << preset.name << " " << p.label();
  const Preset* decode = op.find_preset("decode");
  ASSERT_NE(decode, nullptr);
  EXPECT_EQ(decode->problems.size(), 9u);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const Problem& p : decode->problems) {
    EXPECT_EQ(p.dim("H"), 32);
    EXPECT_EQ(p.dim("H_kv"), 8);
    EXPECT_EQ(p.dim("page"), 16);
    seen.insert({p.dim("batch"), p.dim("context")});
  }
  for (int64_t b : {1, 16, 64})
    for (int64_t c : {1024, 4096, 32768}) EXPECT_TRUE(seen.count({b, c})) << b << "x" << c;
  for (const char* name : {"small", "skewed", "edge", "quick", "ci"}) EXPECT_NE(op.find_preset(name), nullptr) << name;
}

TEST(PagedDecode, CostCountsTheContextOnce) {
  const OpDef& op = GetOp("paged_decode");
  // batch 2: 33 and 100 tokens (sequence 0 long), page 16: 3 + 7 pages; H 8, H_kv 2, d 128.
  const Problem p = Make(2, 8, 2, 16, 33, 100, 12, 7);
  const Cost c = op.cost(p);
  const double kv = 2.0 * 133 * 2 * 128 * 2, q = 2.0 * 8 * 128 * 2;
  EXPECT_DOUBLE_EQ(c.bytes_read, kv + q + 4.0 * (10 + 2));
  EXPECT_DOUBLE_EQ(c.bytes_written, q);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 133 * 8 * 128);
  EXPECT_EQ(c.unit, ComputeUnit::kFp32Fma);
}

TEST(PagedDecode, BlockTableIsAShuffleOfThePoolAndLensMatch) {
  const OpDef& op = GetOp("paged_decode");
  const Problem p = Make(3, 8, 2, 16, 40, 300, 19 + 6 + 5, 19);  // 19 + 3 + 3 pages, 5 spare
  const Shape s = ShapeOf(p);
  testing::HostTensors h = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h, 7);
  const auto* table = static_cast<const int32_t*>(h.tensors[paged_decode::kBlockTable].data);
  const auto* lens = static_cast<const int32_t*>(h.tensors[paged_decode::kContextLens].data);
  std::set<int32_t> used;
  bool in_order = true;
  for (int64_t b = 0; b < s.batch; ++b) {
    EXPECT_EQ(lens[b], s.len(b));
    for (int64_t j = 0; j < s.max_pages; ++j) {
      const int32_t page = table[b * s.max_pages + j];
      if (j >= s.pages(b)) {
        EXPECT_EQ(page, -1);
        continue;
      }
      EXPECT_GE(page, 0);
      EXPECT_LT(page, s.num_pages);
      EXPECT_TRUE(used.insert(page).second) << "page " << page << " owned twice";
      if (j > 0 && page != table[b * s.max_pages + j - 1] + 1) in_order = false;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(used.size()), s.total_pages());
  EXPECT_FALSE(in_order) << "the pages should not be laid out in order";
  // Another seed, another shuffle.
  testing::HostTensors h2 = testing::Allocate(op, p);
  testing::FillInputsPoisonOutputs(op, h2, 8);
  EXPECT_NE(std::vector<int32_t>(table, table + s.batch * s.max_pages),
            std::vector<int32_t>(static_cast<const int32_t*>(h2.tensors[paged_decode::kBlockTable].data),
                                 static_cast<const int32_t*>(h2.tensors[paged_decode::kBlockTable].data) +
                                     s.batch * s.max_pages));
}

// batch 1, H 4, H_kv 2, page 2, 3 tokens on pages [1, 0]: tokens 0 and 1 are rows 0 and 1 of page
// 1, token 2 row 0 of page 0. K rows are constant a_t (KV head 0) and 2 a_t (head 1), V rows t + 1
// (head 0) and -(t + 1) (head 1); q heads constant c_h. Score = c_h * a_t * 128 / sqrt(128).
TEST(PagedDecode, ReferenceFollowsTheBlockTableAndTheGroups) {
  const OpDef& op = GetOp("paged_decode");
  const Problem p = Make(1, 4, 2, 2, 3, 0, 2, 2);
  testing::HostTensors h = testing::Allocate(op, p);
  const double a[3] = {0.25, -0.5, 0.125}, c[4] = {0.5, -0.25, 0.125, 1.0};
  const int page_of[3] = {1, 1, 0}, row_of[3] = {0, 1, 0};
  for (int hh = 0; hh < 4; ++hh)
    for (int i = 0; i < 128; ++i) StoreFromDouble(h.tensors[0].data, Dtype::kBF16, hh * 128 + i, c[hh]);
  for (int t = 0; t < 3; ++t)
    for (int kvh = 0; kvh < 2; ++kvh)
      for (int i = 0; i < 128; ++i) {
        const int64_t at = ((page_of[t] * 2 + row_of[t]) * 2 + kvh) * 128 + i;
        StoreFromDouble(h.tensors[1].data, Dtype::kBF16, at, (kvh + 1) * a[t]);
        StoreFromDouble(h.tensors[2].data, Dtype::kBF16, at, (kvh ? -1 : 1) * (t + 1.0));
      }
  auto* table = static_cast<int32_t*>(h.tensors[3].data);
  table[0] = 1, table[1] = 0;
  static_cast<int32_t*>(h.tensors[4].data)[0] = 3;
  const auto out = testing::RunReference(op, p, h.inputs());
  for (int hh = 0; hh < 4; ++hh) {
    const int kvh = hh / 2;
    double w[3], sum = 0, expect = 0;
    for (int t = 0; t < 3; ++t) sum += w[t] = std::exp(c[hh] * (kvh + 1) * a[t] * 128 / std::sqrt(128.0));
    for (int t = 0; t < 3; ++t) expect += w[t] / sum * (kvh ? -1 : 1) * (t + 1.0);
    for (int i = 0; i < 128; ++i) EXPECT_NEAR(out[0][hh * 128 + i], expect, 1e-12) << "head " << hh;
  }
}

TEST(PagedDecode, CpuRungMatchesTheReference) {
  const OpDef& op = GetOp("paged_decode");
  int checked = 0;
  for (const char* name : {"small", "edge", "quick"})
    for (const Problem& base : op.find_preset(name)->problems) {
      Problem p = base;
      p.dtype = Dtype::kBF16;
      for (uint64_t seed : {1, 2}) {
        for (const auto& [variant, r] : testing::CheckCpuVariants(op, p, seed)) {
          ++checked;
          EXPECT_TRUE(r.passed) << variant << " " << p.label() << " seed " << seed << ": " << r.mismatches
                                << " mismatches, max abs " << r.max_abs_error << ", max rel " << r.max_rel_error;
        }
      }
    }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace kbench::kernels
