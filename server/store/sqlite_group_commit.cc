#include "server/store/sqlite_group_commit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kbench::server::sqlite {

GroupCommit::~GroupCommit() {
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) ::close(fd_);
}

absl::Status GroupCommit::WaitDurable(uint64_t ticket) {
  if (ticket == 0) return absl::OkStatus();
  absl::MutexLock lock(&mu_);  // One sync at a time; a caller that waited here is often covered by it.
  if (synced_ >= ticket) return absl::OkStatus();
  // Everything committed before this read is in the WAL file already and is covered by the sync.
  const uint64_t target = committed_.load(std::memory_order_acquire);
  if (fd_ < 0) {
    // Read-only: the descriptor is only synced. SQLite locks the -shm file, not the WAL, so holding
    // another descriptor of it disturbs none of its locks.
    fd_ = ::open(wal_path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return absl::InternalError(absl::StrCat("open ", wal_path_, " to sync it: ", std::strerror(errno)));
  }
  if (::fdatasync(fd_) != 0) return absl::InternalError(absl::StrCat("fdatasync ", wal_path_, ": ", std::strerror(errno)));
  syncs_.fetch_add(1, std::memory_order_relaxed);
  synced_ = target;
  return absl::OkStatus();
}

}  // namespace kbench::server::sqlite
