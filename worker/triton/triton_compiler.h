// The node's Triton: the capability probe (is there a Python with Triton, which version) and the
// compile of one Triton kernel to a cubin plus its metadata, through the sandboxed child of
// python_child.h and the kernel cache (custom/kernel_cache.h), keyed by the SHA-256 of the source,
// the compile request (kernel, parameter types, constexprs, warps, stages, architecture), the Triton
// version and the compile step itself. Needs no GPU: it compiles for an explicit architecture.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/custom/kernel_cache.h"

namespace kbench::worker {

struct TritonCapability {
  bool available = false;
  std::string python;          // The interpreter that was probed.
  std::string triton_version;  // "3.5.1"
  std::string python_version;  // "3.12.3"
  std::string reason;          // Why Triton is absent: "python3 not found", "triton cannot be imported: ..."
  // "triton 3.5.1 (python 3.12.3)" or "absent: <reason>".
  std::string Describe() const;
};

// $KBENCH_PYTHON, else python3 on PATH (as an absolute path); empty when there is none.
std::string FindPython();

// Runs the compile step's probe with `python` (in the compile child, so it sees what a compile sees).
TritonCapability ProbeTriton(const std::string& python, std::chrono::milliseconds limit = std::chrono::seconds(60));

// This process's probe of FindPython(), made once.
const TritonCapability& NodeTritonCapability();

struct TritonParam {
  std::string name;  // The contract's name ("x", "rows").
  std::string type;  // Triton's signature type: "*bf16", "*fp32", "i64".
  bool div16 = false;  // Pointer aligned to / integer divisible by 16 (Triton's specialization).
};

struct TritonCompileRequest {
  std::string source;
  std::string file_name;   // For messages: "my_rmsnorm.py".
  std::string kernel;      // The @triton.jit function.
  std::vector<TritonParam> params;
  std::vector<std::pair<std::string, int64_t>> constexprs;
  int num_warps = 4;
  int num_stages = 3;
  int arch = 90;           // Compute capability, 90 for 9.0.
};

struct TritonKernelImage {
  std::string cubin;
  std::string name;           // The entry in the cubin.
  int64_t shared_bytes = 0;   // Dynamic shared memory each launch needs.
  int num_warps = 4;
  int num_stages = 3;
  // Recent Triton versions append pointer parameters after the kernel's own (global scratch, then
  // profile scratch); each needs size * programs bytes at its alignment, or may be null when 0.
  int64_t global_scratch_size = 0, global_scratch_align = 1;
  int64_t profile_scratch_size = 0, profile_scratch_align = 1;
  std::string triton_version;
  bool cache_hit = false;
  int64_t compile_ns = 0;     // Wall time of the compile child; 0 on a cache hit.
};

// The cache key of a request under a Triton version.
std::string TritonCacheKey(const TritonCompileRequest& request, const std::string& triton_version);

// UNAVAILABLE when `capability` says Triton is absent; INVALID_ARGUMENT with Triton's message (or
// the parameter mismatch) when the kernel does not compile; DEADLINE_EXCEEDED past `limit`;
// INTERNAL when the child dies or answers nonsense. `cache` may be null.
absl::StatusOr<TritonKernelImage> CompileTriton(const TritonCompileRequest& request, const TritonCapability& capability,
                                                const KernelCache* cache, std::chrono::milliseconds limit);

}  // namespace kbench::worker
