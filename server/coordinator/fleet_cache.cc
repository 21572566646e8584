// The fleet view's expiry, background refresh and invalidation.
#include "server/coordinator/fleet_cache.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"

#include "server/coordinator/catalog.h"
#include "server/coordinator/matching.h"

namespace kbench::server {
namespace {

constexpr size_t kMaxSelectors = 64;  // Distinct selectors remembered per view.

}  // namespace

Fleet::Fleet(std::vector<WorkerRecord> workers) {
  workers_.reserve(workers.size());
  for (WorkerRecord& w : workers) {
    auto info = std::make_shared<const v1::WorkerInfo>(std::move(w.info));
    catalog_keys_.push_back(std::make_shared<const std::string>(CatalogKey(*info)));
    registrations_.push_back(std::make_shared<const std::string>());
    versions_.push_back(0);
    workers_.push_back(Worker{std::move(info), w.last_heartbeat_unix_ms, std::move(w.state), std::move(w.current_job_id)});
  }
  parsed_ = workers_.size();
  Index();
}

absl::StatusOr<std::shared_ptr<const Fleet>> Fleet::FromRows(std::vector<WorkerRow> rows, const Fleet* previous) {
  std::shared_ptr<Fleet> fleet(new Fleet());
  fleet->workers_.reserve(rows.size());
  for (WorkerRow& row : rows) {
    Worker w{nullptr, row.last_heartbeat_unix_ms, std::move(row.state), std::move(row.current_job_id)};
    if (previous != nullptr) {
      if (auto it = previous->by_id_.find(row.worker_id); it != previous->by_id_.end()) {
        const size_t i = it->second;
        // Left out: the store asked Holds; the version is compared here without a second lookup.
        const bool same = row.registration_left_out
                              ? row.registration_version != 0 && previous->versions_[i] == row.registration_version
                              : *previous->registrations_[i] == row.registration;
        if (same) {
          w.info = previous->workers_[i].info;
          fleet->registrations_.push_back(previous->registrations_[i]);
          fleet->catalog_keys_.push_back(previous->catalog_keys_[i]);
        }
      }
    }
    if (w.info == nullptr && row.registration_left_out)
      return absl::InternalError(absl::StrCat("the registration of ", row.worker_id.substr(0, 40),
                                              " was left out of the read, but the view before does not hold it"));
    if (w.info == nullptr) {
      auto info = std::make_shared<v1::WorkerInfo>();
      if (!info->ParseFromString(row.registration))
        return absl::DataLossError(absl::StrCat("stored worker info of ", row.worker_id.substr(0, 40), " does not parse"));
      info->set_worker_id(row.worker_id);
      fleet->catalog_keys_.push_back(std::make_shared<const std::string>(CatalogKey(*info)));
      fleet->registrations_.push_back(std::make_shared<const std::string>(std::move(row.registration)));
      w.info = std::move(info);
      ++fleet->parsed_;
    }
    fleet->versions_.push_back(row.registration_version);
    fleet->workers_.push_back(std::move(w));
  }
  fleet->Index();
  return std::shared_ptr<const Fleet>(std::move(fleet));
}

void Fleet::Index() {
  std::unordered_map<std::string_view, uint32_t> catalogs;  // CatalogKey -> its number.
  catalog_of_.reserve(workers_.size());
  by_id_.reserve(workers_.size());
  for (size_t i = 0; i < workers_.size(); ++i) {
    by_id_.emplace(workers_[i].info->worker_id(), i);
    auto it = catalogs.try_emplace(*catalog_keys_[i], static_cast<uint32_t>(catalogs.size())).first;
    catalog_of_.push_back(it->second);
  }
  distinct_catalogs_ = catalogs.size();
}

bool Fleet::Holds(const std::string& worker_id, int64_t registration_version) const {
  if (registration_version == 0) return false;
  auto it = by_id_.find(worker_id);
  return it != by_id_.end() && versions_[it->second] == registration_version;
}

const v1::WorkerInfo* Fleet::Find(absl::string_view worker_id) const {
  const Worker* w = FindWorker(worker_id);
  return w == nullptr ? nullptr : w->info.get();
}

const Fleet::Worker* Fleet::FindWorker(absl::string_view worker_id) const {
  auto it = by_id_.find(std::string(worker_id));
  return it == by_id_.end() ? nullptr : &workers_[it->second];
}

std::shared_ptr<const Fleet::Admitted> Fleet::Admit(const v1::GpuSelector& selector) const {
  const std::string key = selector.SerializeAsString();
  {
    absl::MutexLock lock(&mu_);
    if (auto it = admitted_.find(key); it != admitted_.end()) return it->second;
  }
  auto admitted = std::make_shared<Admitted>();
  // One worker per distinct catalog among the matching ones, in the order their catalogs first
  // appear: the merge of those equals the merge of all (catalog.h).
  // Per distinct catalog: the largest admitted device memory of the matching workers that have it
  // (-1: no matching worker has it).
  std::vector<int64_t> memory(distinct_catalogs_, -1);
  std::vector<const v1::WorkerInfo*> distinct;
  std::vector<uint32_t> distinct_ids;
  for (size_t i = 0; i < workers_.size(); ++i) {
    const v1::WorkerInfo& info = *workers_[i].info;
    admitted->all.push_back(&info);
    if (!WorkerMatches(selector, info)) continue;
    admitted->matching.push_back(&info);
    const uint32_t c = catalog_of_[i];
    if (memory[c] < 0) {
      memory[c] = 0;
      distinct.push_back(&info);
      distinct_ids.push_back(c);
    }
    for (const v1::DeviceInfo& d : info.devices())
      if (DeviceMatches(selector, d)) memory[c] = std::max(memory[c], d.memory_bytes());
  }
  admitted->catalog = MergeCatalogs(distinct);
  for (size_t k = 0; k < distinct.size(); ++k)
    for (const v1::OpInfo& op : distinct[k]->catalog()) {
      int64_t& best = admitted->memory_by_op[op.name()];
      best = std::max(best, memory[distinct_ids[k]]);
    }
  absl::MutexLock lock(&mu_);
  if (admitted_.size() >= kMaxSelectors) admitted_.clear();
  admitted_.emplace(key, admitted);
  return admitted;
}

FleetCache::FleetCache(std::chrono::milliseconds max_age, Reader reader)
    : max_age_(max_age),
      reader_(reader ? std::move(reader) : Reader([](Store* store, const HaveRegistration& have) {
        return store->ListWorkerRows(have);
      })) {}

FleetCache::~FleetCache() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (refresher_.joinable()) refresher_.join();  // A read under way finishes first.
}

absl::StatusOr<FleetCache::View> FleetCache::Get(Store* store, Want want) {
  mu_.Lock();
  // kUnchanged and kFresh that find no usable view need a read that begins after this call.
  const uint64_t needed = reads_started_ + 1;
  while (true) {
    const bool young = fleet_ != nullptr && SteadyClock::now() - read_at_ < max_age_;
    const bool usable = (want == Want::kAny && young) || (want == Want::kUnchanged && young && changed_->empty());
    if (usable || (fleet_ != nullptr && fleet_read_ >= needed)) {
      View view{fleet_, changed_, fleet_read_ < needed};
      mu_.Unlock();
      return view;
    }
    // kAny does not wait for a read: the view it replaces is only a moment older. When none is under
    // way it starts one in the background (the coordinator's once-a-second snapshot reads it
    // otherwise, so this happens only when that read is late).
    if (want == Want::kAny && fleet_ != nullptr) {
      if (!reading_) RefreshInBackgroundLocked(store);
      View view{fleet_, changed_, true};
      mu_.Unlock();
      return view;
    }
    if (!reading_) break;
    mu_.Await(absl::Condition(+[](bool* reading) { return !*reading; }, &reading_));
  }
  const Read read = BeginReadLocked();
  mu_.Unlock();
  return FinishRead(store, read);
}

FleetCache::Read FleetCache::BeginReadLocked() {
  reading_ = true;
  changed_during_read_.clear();
  return Read{++reads_started_, SteadyClock::now()};
}

absl::StatusOr<FleetCache::View> FleetCache::FinishRead(Store* store, Read read) {
  // Only this read replaces fleet_ (reading_ keeps others out), so the previous view stays put.
  std::shared_ptr<const Fleet> previous;
  {
    absl::MutexLock lock(&mu_);
    previous = fleet_;
  }
  // The store may leave out the registrations the view before holds (a thousand workers' catalogs
  // were ~9 MiB a read on PostgreSQL): FromRows takes those from it.
  HaveRegistration have;
  if (previous != nullptr)
    have = [p = previous.get()](const std::string& id, int64_t version) { return p->Holds(id, version); };
  absl::StatusOr<std::vector<WorkerRow>> rows = reader_(store, have);
  absl::StatusOr<std::shared_ptr<const Fleet>> fleet =
      rows.ok() ? Fleet::FromRows(*std::move(rows), previous.get()) : rows.status();
  previous.reset();
  absl::MutexLock lock(&mu_);
  reading_ = false;
  ++reads_done_;
  if (!fleet.ok()) return fleet.status();
  fleet_ = *std::move(fleet);
  fleet_read_ = read.number;
  read_at_ = read.started;  // Its age counts from before the read: the store may have changed during it.
  changed_ = std::make_shared<const std::set<std::string>>(std::move(changed_during_read_));
  changed_during_read_.clear();
  return View{fleet_, changed_, false};
}

void FleetCache::RefreshInBackgroundLocked(Store* store) {
  if (stopping_) return;
  refresh_read_ = BeginReadLocked();
  refresh_store_ = store;
  // Get runs on callers' threads; the first of them starts the thread, under mu_, and the destructor
  // joins it, after which no Get may run.
  if (!refresher_.joinable()) refresher_ = std::thread([this] { RefreshLoop(); });
}

void FleetCache::RefreshLoop() {
  mu_.Lock();
  while (true) {
    mu_.Await(absl::Condition(this, &FleetCache::RefreshWanted));
    if (refresh_store_ == nullptr) break;  // Stopping, nothing asked for.
    Store* store = std::exchange(refresh_store_, nullptr);
    const Read read = refresh_read_;
    mu_.Unlock();
    // An error leaves the view as it was; a call that finds it expired reads inline and reports it.
    (void)FinishRead(store, read);
    mu_.Lock();
  }
  mu_.Unlock();
}

uint64_t FleetCache::reads_done() {
  absl::MutexLock lock(&mu_);
  return reads_done_;
}

void FleetCache::Invalidate(const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto changed = std::make_shared<std::set<std::string>>(*changed_);
  changed->insert(worker_id);
  changed_ = std::move(changed);
  if (reading_) changed_during_read_.insert(worker_id);
}

}  // namespace kbench::server
