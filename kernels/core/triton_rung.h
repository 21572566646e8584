// A Triton rung: an op's <op>_triton.py (a @triton.jit kernel and its kbench_launch description),
// registered by the op beside its CUDA rungs as a CUDA variant whose Variant::triton_source is the
// file's text. kernels/CMakeLists.txt embeds every kernels/**/*_triton.py as the symbol
// kbench::kernels::embedded::<file name with '.' as '_'> (rmsnorm_triton.py: rmsnorm_triton_py).
// The worker compiles and launches it (worker/triton/); on a node without Triton it is SKIPPED.
#pragma once

#include <string>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

struct TritonRungSpec {
  std::string name;         // triton_<op>
  std::string description;  // short: what the kernel does
  const char* source;       // the embedded file
  std::vector<Dtype> dtypes;
};

// CUDA builds only (the rung is a CUDA variant); a path that calls its run_cuda directly instead of
// going through worker/triton/ gets cudaErrorNotSupported rather than a silent no-op.
void AddTritonRung(OpDef& op, TritonRungSpec spec);

}  // namespace kbench::kernels
