// Everything of a Triton kernel's measurement that needs no GPU: the node's capability, the launch
// description, the dtype, each config resolved for the problem and compiled (through the cache).
// What fails here becomes the result's status: SKIPPED (no Triton on the node, a dtype the kernel
// does not implement), COMPILE_ERROR (a bad description, Triton's message, the time limit),
// RUNTIME_ERROR (a grid beyond CUDA's limits, a compile step that died).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/op.h"
#include "kbench/v1/result.pb.h"
#include "worker/custom/kernel_cache.h"
#include "worker/triton/launch_description.h"
#include "worker/triton/triton_compiler.h"

namespace kbench::worker {

// A Triton kernel to measure: a rung of the suite (Variant::triton_source) or a job's file.
struct TritonKernelSource {
  std::string source;
  std::string file_name;       // "rmsnorm_triton.py"
  std::string variant_name;    // "triton_rmsnorm", "custom:my_rmsnorm"
};

struct PreparedConfig {
  ResolvedTritonLaunch launch;
  std::string label;           // TritonConfig::Label of the resolved values
  TritonKernelImage image;
};

struct TritonPrepared {
  v1::ResultStatus status = v1::OK;  // Not OK: the result to report, with `message`.
  std::string message;
  std::vector<PreparedConfig> configs;  // OK: one per config of the description, compiled.
  std::string compiler;                 // "triton 3.5.1"
  int64_t compile_ns = 0;               // Wall time of the compiles made now (side by side); 0 when all were cached.
  bool cache_hit = true;                // Every config came from the cache.
};

struct TritonPrepareOptions {
  int compute_capability = 90;
  const TritonCapability* capability = nullptr;  // Null: NodeTritonCapability().
  const KernelCache* cache = nullptr;
  std::chrono::milliseconds compile_limit{60000};  // For every config (they compile side by side).
};

// The Triton signature of the op's contract for the problem's dtype: pointers "*bf16"/"*fp32" (aligned
// to 16: the harness allocates with cudaMalloc), dims "i64" (divisible by 16 when they are, unless
// named in `do_not_specialize`). The op's tensors in order, then its dims: the launch contract's
// order, for every op.
std::vector<TritonParam> TritonParamsFor(const kernels::OpDef& op, const kernels::Problem& problem,
                                         const std::vector<std::string>& do_not_specialize = {});

TritonPrepared PrepareTriton(const kernels::OpDef& op, const TritonKernelSource& kernel, const kernels::Problem& problem,
                             const TritonPrepareOptions& options);

}  // namespace kbench::worker
