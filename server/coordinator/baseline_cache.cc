// BaselineCache: runs by stored version, pools reused, updated in place or merged.
#include "server/coordinator/baseline_cache.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <span>
#include <utility>

namespace kbench::server {
namespace {

bool IsPlain(const std::vector<double>& samples) {
  return std::is_sorted(samples.begin(), samples.end()) &&
         std::all_of(samples.begin(), samples.end(), [](double x) { return std::isfinite(x) && x != 0; });
}

size_t EntryBytes(const BaselineCache::Entry& e) {
  size_t bytes = sizeof e + (e.pooled ? e.pooled->samples_ns.size() * sizeof(double) : 0);
  for (size_t i = 0; i < e.stamps.size(); ++i)
    bytes += sizeof(BaselineCache::Stamp) + e.stamps[i].job_id.size() + sizeof(BaselineCache::Run) +
             e.runs[i]->samples_ns.size() * sizeof(double);
  return bytes;
}

std::vector<api::RunObservation> RunsOf(const BaselineCache::Entry& e) {
  std::vector<api::RunObservation> out;
  for (const auto& run : e.runs) out.push_back(api::RunObservation{run->median_ns, run->within_rse});
  return out;
}

// previous's pool without its runs that rows no longer list, with the runs that rows added merged in;
// null when that would cost more than merging every run afresh, or when the runs are not all plain
// (then only a fresh merge is sure to give PoolBaseline's vector exactly).
std::shared_ptr<const PooledBaseline> UpdatedPool(const BaselineCache::Entry& previous,
                                                  const BaselineCache::Entry& next) {
  if (previous.pooled == nullptr) return nullptr;
  auto plain = [](const auto& run) { return run->plain; };
  if (!std::all_of(previous.runs.begin(), previous.runs.end(), plain) ||
      !std::all_of(next.runs.begin(), next.runs.end(), plain))
    return nullptr;
  std::vector<const BaselineCache::Run*> gone, added;
  for (size_t i = 0; i < previous.stamps.size(); ++i)
    if (std::find(next.stamps.begin(), next.stamps.end(), previous.stamps[i]) == next.stamps.end())
      gone.push_back(previous.runs[i].get());
  for (size_t i = 0; i < next.stamps.size(); ++i)
    if (std::find(previous.stamps.begin(), previous.stamps.end(), next.stamps[i]) == previous.stamps.end())
      added.push_back(next.runs[i].get());
  // A fresh merge makes about log2(runs) passes over the pool; the update one per added run, plus one
  // to take the gone runs out.
  const size_t passes = added.size() + (gone.empty() ? 0 : 1);
  if (next.runs.size() < 2 || passes >= static_cast<size_t>(std::bit_width(next.runs.size() - 1))) return nullptr;

  const std::vector<double>& old_pool = previous.pooled->samples_ns;
  std::vector<double> pool;
  if (!gone.empty()) {
    std::vector<double> out;
    for (const BaselineCache::Run* run : gone) out.insert(out.end(), run->samples_ns.begin(), run->samples_ns.end());
    std::sort(out.begin(), out.end());
    pool.reserve(old_pool.size());
    std::set_difference(old_pool.begin(), old_pool.end(), out.begin(), out.end(), std::back_inserter(pool));
    if (pool.size() + out.size() != old_pool.size()) return nullptr;  // Not a part of the pool after all.
  } else {
    pool = old_pool;
  }
  std::vector<double> merged;
  for (const BaselineCache::Run* run : added) {
    merged.resize(pool.size() + run->samples_ns.size());
    std::merge(pool.begin(), pool.end(), run->samples_ns.begin(), run->samples_ns.end(), merged.begin());
    pool.swap(merged);
  }
  return std::make_shared<const PooledBaseline>(
      PooledBaseline{static_cast<int>(next.runs.size()), RunsOf(next), std::move(pool)});
}

}  // namespace

std::shared_ptr<const BaselineCache::Run> BaselineCache::Entry::RunOf(const Stamp& stamp) const {
  for (size_t i = 0; i < stamps.size(); ++i)
    if (stamps[i] == stamp) return runs[i];
  return nullptr;
}

std::shared_ptr<const BaselineCache::Entry> BaselineCache::Find(const SeriesKey& series) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(series);
  if (it == slots_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.entry;
}

HaveSamples BaselineCache::Have(const std::shared_ptr<const Entry>& previous) {
  if (previous == nullptr) return nullptr;
  return [previous](const BaselineResult& row) { return previous->RunOf(StampOf(row)) != nullptr; };
}

std::shared_ptr<const PooledBaseline> BaselineCache::Pool(const SeriesKey& series, std::vector<BaselineResult> rows,
                                                          const std::shared_ptr<const Entry>& previous) {
  auto next = std::make_shared<Entry>();
  next->stamps.reserve(rows.size());
  next->runs.reserve(rows.size());
  int64_t read = 0;
  for (BaselineResult& row : rows) {
    Stamp stamp = StampOf(row);
    // previous is immutable, so a run that Have(previous) vouched for is still there.
    std::shared_ptr<const Run> run = row.samples_omitted && previous != nullptr ? previous->RunOf(stamp) : nullptr;
    if (run == nullptr) {
      auto fresh = std::make_shared<Run>();
      fresh->plain = IsPlain(row.samples_ns);
      const api::RunObservation obs = RunOf(row.samples_ns, row.median_ns);
      fresh->median_ns = obs.median_ns;
      fresh->within_rse = obs.within_rse;
      fresh->samples_ns = std::move(row.samples_ns);
      run = std::move(fresh);
      ++read;
    }
    next->stamps.push_back(std::move(stamp));
    next->runs.push_back(std::move(run));
  }

  enum { kReused, kUpdated, kMerged } how = kMerged;
  if (previous != nullptr && previous->pooled != nullptr && previous->stamps == next->stamps) {
    next->pooled = previous->pooled;
    how = kReused;
  } else if (previous != nullptr && (next->pooled = UpdatedPool(*previous, *next)) != nullptr) {
    how = kUpdated;
  } else {
    std::vector<std::span<const double>> spans;
    spans.reserve(next->runs.size());
    for (const auto& run : next->runs) spans.emplace_back(run->samples_ns);
    PooledBaseline fresh = PoolBaseline(spans);
    fresh.runs = RunsOf(*next);  // The stored medians, which the samples' medians may not equal.
    next->pooled = std::make_shared<const PooledBaseline>(std::move(fresh));
  }
  next->bytes = EntryBytes(*next);
  std::shared_ptr<const PooledBaseline> pooled = next->pooled;

  absl::MutexLock lock(&mu_);
  stats_.runs_read += read;
  (how == kReused ? stats_.reused : how == kUpdated ? stats_.updated : stats_.merged) += 1;
  if (max_bytes_ > 0) Insert(series, std::move(next));
  return pooled;
}

void BaselineCache::Insert(const SeriesKey& series, std::shared_ptr<const Entry> entry) {
  auto [it, inserted] = slots_.try_emplace(series);
  if (inserted) {
    lru_.push_front(series);
    it->second.lru = lru_.begin();
  } else {
    bytes_ -= it->second.entry->bytes;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  bytes_ += entry->bytes;
  it->second.entry = std::move(entry);
  while (bytes_ > max_bytes_ && !lru_.empty()) {
    auto victim = slots_.find(lru_.back());
    bytes_ -= victim->second.entry->bytes;
    slots_.erase(victim);
    lru_.pop_back();
    ++stats_.evicted;
  }
}

BaselineCache::Stats BaselineCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

size_t BaselineCache::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace kbench::server
