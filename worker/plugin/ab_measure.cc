// Alternating blocks and pooled samples; see ab_measure.h.
#include "worker/plugin/ab_measure.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/measure/roofline.h"
#include "worker/measure/stats.h"

namespace kbench::worker {

v1::MeasurementSettings BlockSettings(const v1::MeasurementSettings& s, int rounds, bool first_block) {
  v1::MeasurementSettings b = s;
  rounds = std::max(rounds, 1);
  // At least 3 samples a block, so that a block's median means something.
  b.set_min_samples(std::max(3, (s.min_samples() + rounds - 1) / rounds));
  b.set_max_samples(std::max(b.min_samples(), s.max_samples() / rounds));
  b.set_min_time_ns(s.min_time_ns() / rounds);
  b.set_max_time_ns(std::max<int64_t>(1, s.max_time_ns() / rounds));
  if (!first_block) {
    b.set_warmup_ns(std::max<int64_t>(1, s.warmup_ns() / rounds));
    b.set_correctness_trials(1);  // The first block ran every trial; later ones re-check once.
  }
  return b;
}

v1::Result PoolBlocks(const std::vector<v1::Result>& blocks, const kernels::OpDef& op, const kernels::Problem& problem,
                      const Backend& backend) {
  if (blocks.empty()) {
    v1::Result r;
    r.set_status(v1::CANCELLED);
    r.set_status_message("no block was measured");
    return r;
  }
  for (const v1::Result& b : blocks)
    if (b.status() != v1::OK) return b;
  v1::Result out = blocks.front();
  v1::Timing* t = out.mutable_timing();
  t->clear_samples_ns();
  t->clear_sample_throttled();
  std::vector<double> unthrottled;  // the statistics' samples: throttled ones are kept but flagged
  std::vector<bool> flags;
  int64_t warmup_ns = 0;
  int32_t warmup_launches = 0, discarded = 0;
  bool throttled = false;
  for (const v1::Result& b : blocks) {
    for (int i = 0; i < b.timing().samples_ns_size(); ++i) {
      const double x = b.timing().samples_ns(i);
      const bool flagged = i < b.timing().sample_throttled_size() && b.timing().sample_throttled(i);
      t->add_samples_ns(x);
      flags.push_back(flagged);
      if (!flagged) unthrottled.push_back(x);
    }
    t->add_block_sample_counts(b.timing().samples_ns_size());  // Each block is one run of the verdict.
    warmup_ns += b.timing().warmup_ns();
    warmup_launches += b.timing().warmup_launches();
    discarded += b.timing().discarded_throttled();
    throttled = throttled || b.timing().throttled();
  }
  if (discarded > 0) t->mutable_sample_throttled()->Assign(flags.begin(), flags.end());
  if (unthrottled.empty()) unthrottled.assign(t->samples_ns().begin(), t->samples_ns().end());
  const SampleStats st = ComputeStats(unthrottled);
  t->set_median_ns(st.median);
  t->set_mean_ns(st.mean);
  t->set_stddev_ns(st.stddev);
  t->set_min_ns(st.min);
  t->set_max_ns(st.max);
  t->set_p10_ns(st.p10);
  t->set_p90_ns(st.p90);
  t->set_count(st.count);
  t->set_median_relative_standard_error(st.median_rse);
  t->set_stop_reason(blocks.back().timing().stop_reason());
  t->set_warmup_ns(warmup_ns);
  t->set_warmup_launches(warmup_launches);
  t->set_discarded_throttled(discarded);
  t->set_throttled(throttled);
  if (op.cost && st.count > 0)
    *out.mutable_roofline() =
        ComputeRoofline(op.cost(problem), st.median, out.problem().dtype(), backend.calibration(), backend.datasheet());
  return out;
}

std::pair<v1::Result, v1::Result> MeasureAb(Backend& backend, AbSideRef base, AbSideRef head,
                                           const kernels::Problem& problem, const v1::MeasurementSettings& settings,
                                           int rounds, const CancelFlag& cancel) {
  rounds = std::max(rounds, 1);
  std::vector<v1::Result> blocks[2];
  const AbSideRef sides[2] = {base, head};
  bool failed[2] = {false, false};
  for (int r = 0; r < rounds && !cancel.cancelled() && !backend.context_lost(); ++r) {
    // ABBA: each side goes first as often as second, so neither always follows the other.
    for (int k = 0; k < 2; ++k) {
      const int side = (r % 2 == 0) ? k : 1 - k;
      if (failed[side] || backend.context_lost()) continue;
      v1::Result block = backend.MeasureOne(*sides[side].op, *sides[side].variant, problem,
                                            BlockSettings(settings, rounds, r == 0), cancel);
      failed[side] = block.status() != v1::OK;
      blocks[side].push_back(std::move(block));
    }
    if (failed[0] && failed[1]) break;
  }
  v1::Result out[2];
  for (int side = 0; side < 2; ++side) {
    out[side] = PoolBlocks(blocks[side], *sides[side].op, problem, backend);
    out[side].set_op(sides[side].op->name);
    out[side].set_variant(sides[side].variant->name);
    if (blocks[side].empty() && backend.context_lost())
      out[side].set_status_message("not measured: the other side left the device context unusable"),
          out[side].set_status(v1::RUNTIME_ERROR);
  }
  return {std::move(out[0]), std::move(out[1])};
}

}  // namespace kbench::worker
