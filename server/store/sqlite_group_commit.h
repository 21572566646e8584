// Group commit for the SQLite store (WAL mode). Commits run with synchronous=NORMAL under the store's
// one lock, so no call waits behind another call's fsync; a call that promises durability (Submit,
// a lease, a report) then waits, outside that lock, until one fdatasync of the WAL file covers its
// commit. Callers waiting at the same time share that fsync: whoever committed before a sync started
// returns when it ends.
//
// As durable as synchronous=FULL: COMMIT has written the transaction's frames into the WAL file (the
// OS's page cache) before it returns, and fdatasync on any descriptor of that file makes them durable.
// A checkpoint that copies frames into the database syncs the WAL first and the database after
// (SQLite does so under NORMAL too), and the WAL is rewritten from its start only after a checkpoint.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace kbench::server::sqlite {

class GroupCommit {
 public:
  // wal_path: the database's write-ahead log, "<db>-wal"; opened on the first sync.
  explicit GroupCommit(std::string wal_path) : wal_path_(std::move(wal_path)) {}
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Called with the store's lock held, right after a COMMIT that wrote something: its ticket.
  uint64_t Committed() { return committed_.fetch_add(1, std::memory_order_acq_rel) + 1; }
  // The latest ticket: waiting on it covers every commit made so far.
  uint64_t Latest() const { return committed_.load(std::memory_order_acquire); }
  // Returns once a sync that started after commit `ticket` has ended (at once for ticket 0).
  absl::Status WaitDurable(uint64_t ticket);
  // fdatasync calls made so far (tests: concurrent commits share them).
  uint64_t syncs() const { return syncs_.load(std::memory_order_relaxed); }

 private:
  const std::string wal_path_;
  std::atomic<uint64_t> committed_{0};
  std::atomic<uint64_t> syncs_{0};
  absl::Mutex mu_;
  uint64_t synced_ ABSL_GUARDED_BY(mu_) = 0;  // Every ticket up to this one is durable.
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace kbench::server::sqlite
