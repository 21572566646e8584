// BaselineCache on its own: whatever path a pool takes (reused, updated in place, merged afresh), it
// equals PoolBaseline of the rows' samples exactly; the cache stays within its bytes.
#include "server/coordinator/baseline_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kbench::server {
namespace {

const SeriesKey kSeries{"rmsnorm", "v1", "64x1024", v1::DTYPE_F32, "NVIDIA H100"};

// A stored baseline row: version `revision` of job's result 0, with its samples sorted as stores keep them.
BaselineResult Row(const std::string& job, int64_t revision, std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  BaselineResult r;
  r.job_id = job;
  r.attempt = 1;
  r.index = 0;
  r.revision = revision;
  r.samples_ns = std::move(samples);
  return r;
}

// What a store answers to BaselineResults(..., have): rows without the samples the cache holds.
std::vector<BaselineResult> AsStored(std::vector<BaselineResult> rows, const HaveSamples& have) {
  for (BaselineResult& r : rows)
    if (have && have(r)) {
      r.samples_omitted = true;
      r.samples_ns.clear();
    }
  return rows;
}

PooledBaseline Expected(const std::vector<BaselineResult>& rows) {
  std::vector<std::span<const double>> runs;
  for (const BaselineResult& r : rows) runs.emplace_back(r.samples_ns);
  return PoolBaseline(runs);
}

// One judgment's lookup, as the coordinator makes it.
std::shared_ptr<const PooledBaseline> Lookup(BaselineCache& cache, const std::vector<BaselineResult>& rows) {
  std::shared_ptr<const BaselineCache::Entry> previous = cache.Find(kSeries);
  return cache.Pool(kSeries, AsStored(rows, BaselineCache::Have(previous)), previous);
}

void ExpectSamePool(const PooledBaseline& got, const PooledBaseline& want) {
  EXPECT_EQ(got.results, want.results);
  ASSERT_EQ(got.samples_ns.size(), want.samples_ns.size());
  for (size_t i = 0; i < got.samples_ns.size(); ++i) {
    // Bit for bit: the verdict's median and Mann-Whitney U see exactly the same numbers.
    EXPECT_EQ(std::memcmp(&got.samples_ns[i], &want.samples_ns[i], sizeof(double)), 0) << "at " << i;
  }
}

std::vector<double> Noise(std::mt19937_64& rng, int n, double center) {
  std::lognormal_distribution<double> d(0, 0.02);
  std::vector<double> out(n);
  for (double& x : out) x = std::round(center * d(rng));  // Rounded: ties across runs, as timers give.
  return out;
}

TEST(BaselineCache, EveryPathGivesThePoolOfTheRows) {
  std::mt19937_64 rng(7);
  BaselineCache cache(size_t{1} << 20);
  std::vector<BaselineResult> window;
  for (int i = 0; i < 10; ++i) window.push_back(Row("j" + std::to_string(i), i, Noise(rng, 100, 1000)));

  ExpectSamePool(*Lookup(cache, window), Expected(window));  // Cold: merged.
  ExpectSamePool(*Lookup(cache, window), Expected(window));  // Same rows: reused.
  EXPECT_EQ(cache.stats().merged, 1);
  EXPECT_EQ(cache.stats().reused, 1);
  EXPECT_EQ(cache.stats().runs_read, 10);

  // A new result pushes the oldest out: updated in place, one run read.
  window.insert(window.begin(), Row("j10", 10, Noise(rng, 100, 1000)));
  window.pop_back();
  ExpectSamePool(*Lookup(cache, window), Expected(window));
  EXPECT_EQ(cache.stats().updated, 1);
  EXPECT_EQ(cache.stats().runs_read, 11);

  // The same row written again (a new revision) is read again, never taken from the cache.
  window[3] = Row(window[3].job_id, 99, Noise(rng, 100, 1100));
  ExpectSamePool(*Lookup(cache, window), Expected(window));
  EXPECT_EQ(cache.stats().runs_read, 12);

  // Most of the window replaced: merged afresh.
  for (int i = 0; i < 6; ++i) window[i] = Row("k" + std::to_string(i), 100 + i, Noise(rng, 100, 900));
  ExpectSamePool(*Lookup(cache, window), Expected(window));
  EXPECT_EQ(cache.stats().merged, 2);

  // A deleted row (an expired attempt's result) shrinks the pool.
  window.erase(window.begin() + 2);
  ExpectSamePool(*Lookup(cache, window), Expected(window));
  EXPECT_EQ(cache.stats().updated, 3);
}

TEST(BaselineCache, SamplesThatAreNotPlainAreAlwaysMergedAfresh) {
  std::mt19937_64 rng(8);
  BaselineCache cache(size_t{1} << 20);
  std::vector<BaselineResult> window;
  for (int i = 0; i < 8; ++i) window.push_back(Row("j" + std::to_string(i), i, Noise(rng, 50, 1000)));
  // -0.0 and 0.0 compare equal but are different doubles; an update in place could swap them.
  window[2].samples_ns = {-0.0, 0.0, 5, 6};
  ExpectSamePool(*Lookup(cache, window), Expected(window));
  window.insert(window.begin(), Row("j8", 8, Noise(rng, 50, 1000)));
  window.pop_back();
  ExpectSamePool(*Lookup(cache, window), Expected(window));
  EXPECT_EQ(cache.stats().updated, 0);
  EXPECT_EQ(cache.stats().merged, 2);

  // NaN has no place in an order: merged afresh too, as the store's own samples would be.
  window[0].samples_ns.push_back(std::numeric_limits<double>::quiet_NaN());
  window[0].revision = 50;
  ExpectSamePool(*Lookup(cache, window), Expected(window));
  EXPECT_EQ(cache.stats().updated, 0);
}

TEST(BaselineCache, RandomHistoriesMatchThePoolOfTheRows) {
  std::mt19937_64 rng(9);
  BaselineCache cache(size_t{1} << 20);
  std::vector<BaselineResult> stored;  // Newest first, as the store lists them.
  int64_t next_revision = 0;
  for (int step = 0; step < 400; ++step) {
    const int what = static_cast<int>(rng() % 10);
    if (what < 6 || stored.empty()) {
      stored.insert(stored.begin(), Row("j" + std::to_string(step), next_revision++,
                                        Noise(rng, 1 + static_cast<int>(rng() % 60), 1000)));
    } else if (what < 8) {
      const size_t at = rng() % stored.size();
      stored[at] = Row(stored[at].job_id, next_revision++, Noise(rng, 20, 1050));
    } else {
      stored.erase(stored.begin() + static_cast<long>(rng() % stored.size()));
    }
    // The baseline is the newest 10, leaving out one job now and then (the judged job's own results).
    std::vector<BaselineResult> window;
    const std::string excluded = rng() % 4 == 0 && !stored.empty() ? stored[0].job_id : "";
    for (const BaselineResult& r : stored)
      if (r.job_id != excluded && window.size() < 10) window.push_back(r);
    ExpectSamePool(*Lookup(cache, window), Expected(window));
  }
  const BaselineCache::Stats s = cache.stats();
  EXPECT_GT(s.updated, 0);
  EXPECT_GT(s.merged, 0);
  EXPECT_GT(s.reused + s.updated + s.merged, 399);
}

TEST(BaselineCache, StaysWithinItsBytesAndZeroCachesNothing) {
  std::mt19937_64 rng(10);
  BaselineCache small(64 * 1024);
  for (int series = 0; series < 50; ++series) {
    SeriesKey key = kSeries;
    key.variant = "v" + std::to_string(series);
    std::vector<BaselineResult> rows;
    for (int i = 0; i < 10; ++i) rows.push_back(Row("j" + std::to_string(i), i, Noise(rng, 100, 1000)));
    small.Pool(key, rows, small.Find(key));
    EXPECT_LE(small.bytes(), size_t{64 * 1024});
  }
  EXPECT_GT(small.stats().evicted, 0);
  SeriesKey newest = kSeries;
  newest.variant = "v49";
  EXPECT_NE(small.Find(newest), nullptr);
  EXPECT_EQ(small.Find(kSeries), nullptr);  // Series "v1", among the first, was evicted.

  BaselineCache off(0);
  std::vector<BaselineResult> rows = {Row("j", 1, {1, 2, 3})};
  ExpectSamePool(*Lookup(off, rows), Expected(rows));
  EXPECT_EQ(off.Find(kSeries), nullptr);
  EXPECT_EQ(off.bytes(), 0u);
}

TEST(BaselineCache, NoBaselineIsNoResults) {
  BaselineCache cache(size_t{1} << 20);
  const PooledBaseline none = *Lookup(cache, {});
  EXPECT_EQ(none.results, 0);
  EXPECT_TRUE(none.samples_ns.empty());
}

}  // namespace
}  // namespace kbench::server
