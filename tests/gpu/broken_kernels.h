// Test-only CUDA variants of vector_add that misbehave on purpose, for tests of the runner's isolation
// (a fault or a hang must cost one result, not the worker). They follow vector_add's contract
// (x, y -> out, dim N, f32/bf16) so any harness can run them as extra variants of that op. They are
// never added to the built-in registry.
#pragma once

#include <vector>

#include "core/op.h"

namespace kbench::kernels::testing {

// "cuda_broken_oob_write": computes out correctly, then one thread stores 1 TiB past the end of out:
//   the synchronization after it reports cudaErrorIllegalAddress and the CUDA context is lost.
// "cuda_broken_hang": never finishes (spins on a device flag nothing sets); only killing the process
//   that owns the context ends it.
std::vector<Variant> BrokenCudaVariants();

}  // namespace kbench::kernels::testing
