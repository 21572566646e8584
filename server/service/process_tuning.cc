// Allocator and mutex settings for a process with a thread per call in flight (gRPC's sync server).
// Measured with kbench-load (server/README.md, "Load"): glibc's malloc was a third of the
// coordinator's CPU, most of it malloc_consolidate.
#include "server/service/process_tuning.h"

#include <malloc.h>

#include "absl/synchronization/mutex.h"

namespace kbench::server {

void TuneProcessForManyThreads() {
  // glibc gives each busy thread a malloc arena of its own (up to 8 per core); with a thread per
  // call in flight a large fleet's calls spread the heap over all of them and the RSS grows to
  // several times what is live (kbench-load: 2 GiB instead of 0.7 GiB with two).
  mallopt(M_ARENA_MAX, 2);
  // No fastbins: with them, every allocation of 1 KiB or more (gRPC's buffers, a registration's
  // catalog) first merges every free small chunk of the arena (malloc_consolidate), under the
  // arena's lock; at a few thousand calls a second that was 10% of the coordinator's CPU and the
  // allocator ~35%. Small blocks still come from the per-thread cache (tcache) without a lock.
  mallopt(M_MXFAST, 0);
  // Without fastbins a free coalesces into the top of the heap, which glibc then hands back to the
  // kernel at 128 KiB and faults in again (zeroed) at the next burst: keep up to 256 MiB free at the
  // top instead (the RSS stays at its peak, which the load test bounds), grow it 64 MiB at a time,
  // and map only blocks of 4 MiB or more on their own.
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  // absl's deadlock detection (on in Debian's build) records every lock taken in a global graph
  // under a global lock: a serialization point for every call's mutexes. The tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace kbench::server
