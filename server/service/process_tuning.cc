// Process-wide settings; see process_tuning.h. Measured with kbench-load (server/README.md, Load).
#include "server/service/process_tuning.h"

#include "absl/synchronization/mutex.h"

namespace kbench::server {

void TuneProcess() {
  // absl's deadlock detection (on in Debian's build) records every lock taken in a global graph
  // under a global lock: a serialization point for every call's mutexes. The tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // glibc's allocator keeps its defaults. The settings the thread-per-call server needed (two
  // arenas, no fastbins, a 256 MiB trim threshold) made the callback server slower: in back-to-back
  // runs, ~210 instead of ~160 jobs/s and a p50 of 8 instead of 35-64 ms without them, at an RSS of
  // ~200 instead of ~180 MiB.
}

}  // namespace kbench::server
