// Process-wide settings of a server that runs many calls at once on many threads (the coordinator,
// and the load generator that drives it): the allocator's and absl's, set once at the start of main.
#pragma once

namespace kbench::server {

// Call first thing in main, before any thread starts or anything large is allocated.
void TuneProcessForManyThreads();

}  // namespace kbench::server
