// Process-wide settings of the coordinator (and of the load generator that drives it), set once at
// the start of main.
#pragma once

namespace kbench::server {

// Call first thing in main, before any thread starts.
void TuneProcess();

}  // namespace kbench::server
