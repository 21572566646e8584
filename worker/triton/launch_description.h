// The launch description of a Triton kernel file: a module-level dict `kbench_launch = {...}` beside
// the @triton.jit kernel, read here without Python (py_literal.h) and evaluated for each problem.
//
//   kbench_launch = {
//       "kernel": "rmsnorm_kernel",          # the @triton.jit function; default kbench_<op>
//       "grid": ["rows"],                    # x[, y[, z]]: expressions over the op's dims and constexprs
//       "constexprs": {"BLOCK": 4096},       # ints, or expressions over the dims: "min(cols, 4096)",
//                                            # "next_pow2(cols)"
//       "num_warps": 8, "num_stages": 1,
//       "configs": [{"constexprs": {...}, "num_warps": 8, "num_stages": 3}, ...],  # autotune candidates
//       "dtypes": ["bf16", "f32"],           # default: every dtype of the op
//       "dims": {"d": [64, 128]},            # optional: the only values a dim may take; others SKIPPED
//       "do_not_specialize": ["N"],          # optional: dims passed without Triton's divisibility-by-16
//                                            # hint, so problems that differ only there share one kernel
//   }
//
// The expressions see the op's dims, the constexprs before them, and the op's flags: 1 when the
// problem sets the flag, else 0 (`"constexprs": {"CAUSAL": "causal"}`).
//
// The kernel's non-constexpr parameters are the launch contract's (the op's tensors, then its dims as
// int64), in that order; the block is 32 * num_warps threads.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/op.h"

namespace kbench::worker {

struct TritonConfig {
  std::vector<std::pair<std::string, std::string>> constexprs;  // Name, expression (or an integer's text).
  int num_warps = 4;
  int num_stages = 3;
  // "BLOCK_M=128 BLOCK_N=128 num_warps=8 num_stages=3", the values as resolved for a problem.
  std::string Label(const std::vector<std::pair<std::string, int64_t>>& values) const;
};

struct TritonLaunch {
  std::string kernel;              // Empty: the caller's default (kbench_<op>).
  std::vector<std::string> grid;   // 1 to 3 expressions.
  std::vector<TritonConfig> configs;  // At least one; more than one: autotune candidates.
  std::vector<kernels::Dtype> dtypes;  // Empty: every dtype of the op.
  std::vector<std::pair<std::string, std::vector<int64_t>>> dim_values;  // "dims": a dim's only values.
  std::vector<std::string> do_not_specialize;  // Dims compiled without the divisibility hint.
};

// The name the description is found under.
inline constexpr char kTritonLaunchName[] = "kbench_launch";

// Finds `kbench_launch = {` at the start of a line of `source` and reads it. INVALID_ARGUMENT
// "my_rmsnorm.py(12): ..." naming the line of a missing, unreadable or wrong entry.
absl::StatusOr<TritonLaunch> ParseTritonLaunch(absl::string_view source, absl::string_view file_name);

struct ResolvedTritonLaunch {
  std::array<int64_t, 3> grid{1, 1, 1};
  std::vector<std::pair<std::string, int64_t>> constexprs;
  int num_warps = 4;
  int num_stages = 3;
};

// Why the kernel does not implement `problem` by its "dims" ("d = 256 (implemented: 64, 128)");
// empty when it does. The caller reports it as SKIPPED, like a dtype the description leaves out.
std::string UnimplementedDims(const TritonLaunch& launch, const kernels::Problem& problem);

// The constexpr values (in order, each may use the dims, the flags and the constexprs before it) and
// the grid (which may use all of them) for `problem`. `flags` are the op's: each is 1 when the
// problem sets it, else 0. INVALID_ARGUMENT naming the expression that fails or a grid beyond CUDA's
// limits.
absl::StatusOr<ResolvedTritonLaunch> ResolveTritonLaunch(const TritonLaunch& launch, const TritonConfig& config,
                                                         const kernels::Problem& problem,
                                                         const std::vector<std::string>& flags = {});

}  // namespace kbench::worker
