// The Triton rungs of the suite: each op's <op>_triton.py beside its CUDA rungs, registered here as
// CUDA variants named triton_<op>, whose Variant::triton_source is the file's text (embedded at build
// time). The worker compiles and launches them (worker/triton/); on a node without Triton they come
// back SKIPPED. CUDA builds only: elsewhere this adds nothing.
#pragma once

#include "core/registry.h"

namespace kbench::kernels {

void AddTritonRungs(Registry& registry);

}  // namespace kbench::kernels
