// The coordinator's cache of series baselines, so that judging a result does not read, unpack and
// merge the same baselines' samples on every report. The verdict itself needs only each run's median
// and within-run RSE (PooledBaseline::runs); the pooled samples are kept for the record.
//
// The store stays the authority on which results form a baseline: every judgment still asks it
// (Store::BaselineResults, one indexed query) for the baseline's rows. The cache only supplies the
// samples of rows it has seen, keyed by the row's stored version (job, attempt, index, revision), and
// the pooled samples of the last row list of each series. So a result stored, replaced or deleted by
// anyone (this process, another coordinator replica on the same PostgreSQL, a restart) changes the row
// list and is seen at once; no verdict is ever made on a stale baseline.
//
// When the row list changed by a few results (the usual case: a new main-branch result pushed the
// oldest one out), the pool is updated in place (the gone runs removed, the new ones merged in) rather
// than merged from scratch. That gives the same vector as PoolBaseline only when equal samples are
// identical doubles, so it is done only for runs of finite, non-zero samples, sorted as stored.
//
// Bounded by bytes (samples and pools), least recently used series evicted first. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/coordinator/regression.h"
#include "server/store/store.h"

namespace kbench::server {

class BaselineCache {
 public:
  // One stored version of a baseline result.
  struct Stamp {
    std::string job_id;
    int32_t attempt = 0;
    int32_t index = 0;
    int64_t revision = 0;
    bool operator==(const Stamp&) const = default;
    auto operator<=>(const Stamp&) const = default;
  };
  static Stamp StampOf(const BaselineResult& row) { return Stamp{row.job_id, row.attempt, row.index, row.revision}; }

  // One baseline result's samples, ascending.
  struct Run {
    std::vector<double> samples_ns;
    bool plain = false;  // Sorted, every sample finite and non-zero: may be pooled incrementally.
    double median_ns = 0;  // The run's observation for the verdict: its stored median (else the samples').
    double within_rse = 0;
  };

  // A series' cached baseline: the rows of its last lookup, their runs and their pool. Immutable once
  // cached, so a judgment holds it (shared) while others replace it.
  struct Entry {
    std::vector<Stamp> stamps;  // The rows, newest first, as the store listed them.
    std::vector<std::shared_ptr<const Run>> runs;
    std::shared_ptr<const PooledBaseline> pooled;
    size_t bytes = 0;
    // The run of stamp, or null.
    std::shared_ptr<const Run> RunOf(const Stamp& stamp) const;
  };

  // How pools came about, for tests and for judging whether the cache earns its keep.
  struct Stats {
    int64_t reused = 0;   // Row list unchanged: the cached pool as it was.
    int64_t updated = 0;  // A few rows changed: the cached pool updated in place.
    int64_t merged = 0;   // Pooled from scratch (cold, or too much changed).
    int64_t runs_read = 0;  // Baseline results whose samples came from the store.
    int64_t evicted = 0;    // Series dropped to stay within max_bytes.
  };

  // max_bytes 0: caches nothing (every pool is merged from what the store read).
  explicit BaselineCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The series' cached baseline, or null. Hold it for the rest of the judgment.
  std::shared_ptr<const Entry> Find(const SeriesKey& series);

  // For Store::BaselineResults: true for rows whose samples previous (may be null) holds.
  static HaveSamples Have(const std::shared_ptr<const Entry>& previous);

  // The pooled baseline of rows (as Store::BaselineResults returned them, asked with
  // Have(previous)), which becomes the series' cached baseline. The result equals
  // PoolBaseline(every row's samples) exactly.
  std::shared_ptr<const PooledBaseline> Pool(const SeriesKey& series, std::vector<BaselineResult> rows,
                                             const std::shared_ptr<const Entry>& previous);

  Stats stats() const;
  size_t bytes() const;

 private:
  struct Slot {
    std::shared_ptr<const Entry> entry;
    std::list<SeriesKey>::iterator lru;  // Position in lru_ (front: most recent).
  };

  void Insert(const SeriesKey& series, std::shared_ptr<const Entry> entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  std::map<SeriesKey, Slot> slots_ ABSL_GUARDED_BY(mu_);
  std::list<SeriesKey> lru_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench::server
