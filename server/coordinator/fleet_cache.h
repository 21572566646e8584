// The registered workers as Submit validates a job against them (and LeaseJob matches a worker's
// registration against the queue), kept for a moment. A submission
// checks its op against the catalog of every worker its selector admits; reading and parsing every
// worker's registration (a catalog of several KiB each) for every submission costs far more than
// the submission itself once the fleet has hundreds of workers, and holds the store meanwhile.
// Submit validates on a view no registration through this coordinator has changed since it was read
// (else it reads afresh), so registrations here are seen at once; registrations through another
// replica are seen within max_age. It reads afresh before it refuses a job on a cached view, so a
// cached view can only let through, for at most max_age, a job for a catalog that a worker has just
// left through another replica (which that worker then fails, as it would had the job come a moment
// earlier). LeaseJob takes a worker's registration from the view unless it changed since.
// A kAny call (LeaseJob, a report) never reads: one that finds the view expired is served it and
// starts the read in the background. Reading a thousand registrations (~9 MiB) took up to 420 ms of
// one LeaseJob on PostgreSQL under load, when the coordinator's once-a-second snapshot read (which
// keeps the view young) came late. A read asks the store only for the registrations this view does
// not hold at their current version (WorkerRow::registration_version, on PostgreSQL): the heartbeats,
// states and leases of every worker, and the few registrations that changed. Under load a read of
// every registration took 40-400 ms on PostgreSQL, twice a second (the snapshot's, and the one a
// Submit makes inline once the view has expired, which the Submits behind it wait for, each on a
// call thread: the calls of every other rpc queued behind them; server/README.md, Load).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <functional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"
#include "server/store/store.h"

namespace kbench::server {

// The workers as read at one moment, with what is derived from them computed once per selector.
// Registrations are parsed once and shared by the views that follow while their stored bytes stay
// the same: a refresh of a thousand-worker fleet parses (and later destroys) only the registrations
// that changed, not a thousand catalogs every second.
class Fleet {
 public:
  struct Worker {
    std::shared_ptr<const v1::WorkerInfo> info;
    int64_t last_heartbeat_unix_ms = 0;
    std::string state;
    std::string current_job_id;
  };

  explicit Fleet(std::vector<WorkerRecord> workers);
  // From the store's rows; a registration with the same worker id and bytes as in `previous` (may
  // be null), or left out of the row at the version previous holds, shares previous's parsed
  // WorkerInfo. DATA_LOSS when a registration does not parse; INTERNAL when one left out is not
  // previous's.
  static absl::StatusOr<std::shared_ptr<const Fleet>> FromRows(std::vector<WorkerRow> rows, const Fleet* previous);
  // Whether this view holds the worker's registration at this store version (never for version 0).
  bool Holds(const std::string& worker_id, int64_t registration_version) const;

  const std::vector<Worker>& workers() const { return workers_; }
  // The registration of the worker with this id, or null.
  const v1::WorkerInfo* Find(absl::string_view worker_id) const;
  // The worker with this id (its registration shared), or null.
  const Worker* FindWorker(absl::string_view worker_id) const;
  // How many registrations building this view parsed (the others were shared).
  size_t parsed() const { return parsed_; }

  // The workers a selector admits and their merged catalog (catalog.h); `all` is every worker.
  struct Admitted {
    std::vector<const v1::WorkerInfo*> all, matching;
    std::vector<v1::OpInfo> catalog;
    // Per op of the catalog: the largest memory of a device the selector admits on a matching
    // worker that has the op (what MaxMatchingMemoryBytes gives over those workers), so that a
    // submission does not walk every matching worker's catalog.
    std::unordered_map<std::string, int64_t> memory_by_op;
  };
  // Thread-safe; kept per selector for the life of this view. The catalog is merged over one worker
  // per distinct catalog (catalog.h's CatalogKey): a fleet of one build merges one catalog, not a
  // thousand.
  std::shared_ptr<const Admitted> Admit(const v1::GpuSelector& selector) const;
  // How many distinct catalogs the workers have.
  size_t distinct_catalogs() const { return distinct_catalogs_; }

 private:
  Fleet() = default;
  // by_id_, catalog_of_ and distinct_catalogs_ from workers_ and catalog_keys_.
  void Index();

  std::vector<Worker> workers_;
  // Per worker: its registration's stored bytes (empty when built from records) and its CatalogKey,
  // both shared with the next view while the bytes stay the same.
  std::vector<std::shared_ptr<const std::string>> registrations_;
  std::vector<std::shared_ptr<const std::string>> catalog_keys_;
  std::vector<int64_t> versions_;  // Per worker: its registration's version in the store (0: none).
  size_t parsed_ = 0;
  std::unordered_map<std::string, size_t> by_id_;
  std::vector<uint32_t> catalog_of_;  // Per worker: which distinct catalog it has (0, 1, ...).
  size_t distinct_catalogs_ = 0;
  mutable absl::Mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const Admitted>> admitted_ ABSL_GUARDED_BY(mu_);
};

class FleetCache {
 public:
  // How a read gets the rows (the store's ListWorkerRows, told which registrations the view before
  // holds; tests give their own).
  using Reader = std::function<absl::StatusOr<std::vector<WorkerRow>>(Store*, const HaveRegistration&)>;
  explicit FleetCache(std::chrono::milliseconds max_age) : FleetCache(max_age, nullptr) {}
  FleetCache(std::chrono::milliseconds max_age, Reader reader);
  ~FleetCache();
  FleetCache(const FleetCache&) = delete;
  FleetCache& operator=(const FleetCache&) = delete;

  enum class Want {
    kAny,        // A view younger than max_age, else the last one while a read runs (started in the
                 // background if none was); workers changed since are listed in View::changed.
    kUnchanged,  // A view younger than max_age that no registration through this coordinator has changed.
    kFresh,      // A view read after this call began.
  };
  struct View {
    std::shared_ptr<const Fleet> fleet;
    // Workers registered or changed through this coordinator since the view was read: look them up
    // in the store.
    std::shared_ptr<const std::set<std::string>> changed;
    bool cached = false;  // Served from memory rather than read for this call.
  };
  // One read of the store at a time: callers that need one while it runs wait for it and share it,
  // so that a burst of calls never holds more than two views in memory.
  absl::StatusOr<View> Get(Store* store, Want want);
  // A worker registered or changed through this coordinator.
  void Invalidate(const std::string& worker_id);
  // Reads finished (the inline and background ones), for tests.
  uint64_t reads_done();

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Read {
    uint64_t number = 0;
    SteadyClock::time_point started;
  };
  // Marks a read begun (one at a time: reading_).
  Read BeginReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the rows and publishes the view it gives, or returns the read's error (the view stays).
  absl::StatusOr<View> FinishRead(Store* store, Read read) ABSL_LOCKS_EXCLUDED(mu_);
  // Hands a read to the background thread (started on first use).
  void RefreshInBackgroundLocked(Store* store) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefreshLoop();
  bool RefreshWanted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return refresh_store_ != nullptr || stopping_; }

  const std::chrono::milliseconds max_age_;
  const Reader reader_;
  absl::Mutex mu_;
  Store* refresh_store_ ABSL_GUARDED_BY(mu_) = nullptr;  // A background read asked for, with its store.
  Read refresh_read_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t reads_done_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread refresher_;  // Started and joined under the same owner; see RefreshInBackgroundLocked.
  std::shared_ptr<const Fleet> fleet_ ABSL_GUARDED_BY(mu_);
  SteadyClock::time_point read_at_ ABSL_GUARDED_BY(mu_);        // When the read of fleet_ began.
  uint64_t fleet_read_ ABSL_GUARDED_BY(mu_) = 0;                // Which read gave fleet_.
  uint64_t reads_started_ ABSL_GUARDED_BY(mu_) = 0;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const std::set<std::string>> changed_ ABSL_GUARDED_BY(mu_) =
      std::make_shared<const std::set<std::string>>();
  std::set<std::string> changed_during_read_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench::server
