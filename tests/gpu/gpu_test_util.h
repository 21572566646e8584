// Helpers of the GPU tests (whether they run at all: gpu_presence.h): the problems each op is
// checked on, device tensors with guard bands and alignment offsets, and one correctness check of a
// CUDA variant against the op's CPU reference, described in words when it fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/compare.h"
#include "core/op.h"

namespace kbench::kernels::testing {

// The first CUDA error that can leave the context unusable (a fault in a kernel). Once set, later
// GPU checks report it rather than the confusing errors that follow it.
std::string& FirstFatalError();

// cudaError_t `code` by name and description.
std::string CudaText(int code);

// The op's tolerance for a problem: problem_tolerance when the op has one, else tolerance(dtype).
Tolerance ToleranceFor(const OpDef& op, const Problem& p);

// The op's small and edge presets, plus a few shapes that reach the fallback paths of the CUDA
// rungs (rows too wide for registers, widths that are not a multiple of the vector width) for ops
// with dims (rows, cols) or (N). Dtype left unspecified.
std::vector<Problem> TestProblems(const OpDef& op);

// The CUDA C++ variants of an op, in ladder order. Not its Triton rungs: they are compiled and
// launched by the worker (worker/triton/), never through run_cuda, and triton_gpu_test checks them.
std::vector<const Variant*> CudaVariants(const OpDef& op);

struct CheckOptions {
  uint64_t seed = 1;
  // Elements between a 256-byte aligned address and each tensor's start: 0 is what cudaMalloc
  // gives; 1 makes every pointer unaligned for 16-byte vectors, so vectorized rungs must fall back.
  int offset_elems = 0;
  // Run twice on the same inputs and require bitwise-equal outputs.
  bool check_deterministic = false;
};

struct CheckResult {
  bool ran = false;       // false: skipped (skip_reason) or not run because of an earlier fault
  std::string skipped;    // the variant's skip reason, when it skipped
  std::string failure;    // empty when the check passed; otherwise what went wrong, in words
  CompareResult compare;  // merged over the outputs
};

// Allocates device tensors with guard bands, fills inputs with FillUniform (host, then copied),
// poisons outputs and guards with 0xFF bytes (NaN in f32 and bf16), runs the variant on its own
// stream, and checks: the launcher's return code, the synchronization, every output against the
// op's reference within ToleranceFor, untouched guards and inputs, and optionally determinism.
CheckResult CheckCudaVariant(const OpDef& op, const Variant& v, const Problem& p, const CheckOptions& options);

}  // namespace kbench::kernels::testing
