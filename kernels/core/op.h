// The op model: a problem space (named dims, dtypes, presets), a cost model, a CPU reference, a
// tolerance per dtype, and the variants that implement it. Knows nothing of gRPC or protobuf.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dtype.h"

namespace kbench::kernels {

// A concrete problem: the op's dims in the op's order, a dtype, flags.
struct Problem {
  std::vector<std::pair<std::string, int64_t>> dims;
  Dtype dtype = Dtype::kUnspecified;
  std::vector<std::string> flags;

  // Value of a named dim; -1 when absent.
  int64_t dim(std::string_view name) const;
  bool has_flag(std::string_view flag) const;
  // "8192x4096 bf16"
  std::string label() const;
};

struct Tensor;

// A tensor the op reads or writes; its shape is a list of the problem's dim names.
struct TensorSpec {
  std::string name;
  std::vector<std::string> dims;
  bool is_output = false;
  Dtype fixed_dtype = Dtype::kUnspecified;  // kUnspecified: the problem's dtype.
  double init_lo = -1.0, init_hi = 1.0;     // Range of the seeded uniform inputs.
  // Optional: fills this input instead of the uniform values (a block table of shuffled page ids,
  // packed int4 weights, per-group scales). Must be deterministic in (problem, seed, stream).
  std::function<void(const Problem&, const Tensor&, uint64_t seed, uint64_t stream)> fill = nullptr;

  int64_t numel(const Problem& p) const;
  Dtype dtype(const Problem& p) const { return fixed_dtype == Dtype::kUnspecified ? p.dtype : fixed_dtype; }
};

// A buffer bound to a TensorSpec: host memory for CPU variants, device memory for CUDA variants.
struct Tensor {
  void* data = nullptr;
  int64_t numel = 0;
  Dtype dtype = Dtype::kUnspecified;
};

// Which unit bounds an op's FLOPs: the tensor cores at the problem's dtype (GEMM-like ops), the
// f32 FMA pipes (elementwise and reduction arithmetic), or the special-function unit (exp-heavy).
enum class ComputeUnit { kFp32Fma, kTensorCore, kSfu };

// The fewest bytes the problem must move, split into reads (each input once) and writes (each output
// once), since a read-only or write-heavy stream has another ceiling than a copy; and its FLOPs.
struct Cost {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
  ComputeUnit unit = ComputeUnit::kFp32Fma;

  double bytes() const { return bytes_read + bytes_written; }
};

// |out - ref| <= atol + rtol * |ref| elementwise.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

// One CUDA kernel a variant launches, for the resource report (registers, shared memory, occupancy).
struct LaunchInfo {
  std::string kernel_name;
  const void* func = nullptr;  // The __global__ function's host stub.
  int block_threads = 0;
  int64_t dynamic_shared_bytes = 0;
};

// One implementation of an op. Exactly one of run_cpu / run_cuda is set, by backend.
struct Variant {
  std::string name;
  std::string description;  // What this rung teaches.
  Backend backend = Backend::kCpu;
  std::vector<Dtype> dtypes;
  int min_compute_capability = 0;  // e.g. 90 for sm_90a-only code.
  bool is_baseline = false;
  // Why this variant cannot run the problem; empty when it can.
  std::function<std::string(const Problem&)> skip_reason;
  // Tensors are in the op's tensor order (inputs then outputs).
  std::function<void(const Problem&, std::span<const Tensor>)> run_cpu;
  // Launches on the given cudaStream_t; returns a cudaError_t (0 on success).
  std::function<int(const Problem&, std::span<const Tensor>, void* stream)> run_cuda;
  std::function<std::vector<LaunchInfo>(const Problem&)> launches;
  // A Triton rung (core/triton_rung.h): the text of its Python file (a @triton.jit kernel and its
  // kbench_launch description). The CUDA backend compiles and launches it (worker/triton/);
  // run_cuda only answers "not supported" on a path that bypasses that.
  std::string triton_source;

  bool supports(Dtype d) const;
};

struct Preset {
  std::string name;
  std::vector<Problem> problems;  // dtype kUnspecified: run for each requested dtype.
};

// A dim the op computes from its other dims, so that a shape may leave it out: `expr` is a
// launch-grid expression (proto/api/grid_expr.h: + - * / %, cdiv, min, max) over the op's
// non-derived dims. A shape that gives the dim keeps its value; `validate` decides whether it is allowed.
struct DerivedDim {
  std::string name;
  std::string expr;
};

struct OpDef {
  std::string name;
  std::string description;
  std::vector<std::string> dims;
  std::vector<Dtype> dtypes;
  std::vector<std::string> flags;
  std::vector<TensorSpec> tensors;  // Inputs first, then outputs.
  std::vector<Preset> presets;
  int64_t max_dim = int64_t{1} << 31;
  std::function<Cost(const Problem&)> cost;
  // CPU reference in double on the same (rounded) inputs. inputs: host tensors of the input specs,
  // in order; outputs: one vector per output spec, sized numel.
  std::function<void(const Problem&, std::span<const Tensor> inputs, std::vector<std::vector<double>>& outputs)>
      reference;
  // Optional (CUDA builds): the same reference computed on the device in fp64, for problems too large
  // for the CPU one (GEMM 8192^3). inputs: device tensors of the input specs, in order; outputs:
  // device arrays of double, one per output spec, sized numel. Returns a cudaError_t (0 on success).
  // Tested against `reference` on small problems.
  std::function<int(const Problem&, std::span<const Tensor> inputs, std::span<double* const> outputs, void* stream)>
      gpu_reference;
  // The backend uses gpu_reference (when set) for problems whose cost exceeds this many FLOPs.
  double gpu_reference_above_flops = 2e9;
  std::function<Tolerance(Dtype)> tolerance;
  // Optional: a tolerance that depends on the problem, not only on its dtype (a sum over N terms has
  // a rounding error that grows with N). When set, correctness checks use it instead of `tolerance`.
  std::function<Tolerance(const Problem&)> problem_tolerance;
  // Op-specific constraints beyond the dims' ranges; empty when the problem is valid.
  std::function<std::string(const Problem&)> validate;
  std::vector<Variant> variants;
  // Last: members added here move no other member's offset.
  std::vector<DerivedDim> derived_dims;
  std::vector<std::string> zero_dims;  // Dims that may be 0 (long_context = 0: no long sequence); others are >= 1.

  const Variant* find_variant(std::string_view name) const;
  const Preset* find_preset(std::string_view name) const;
  std::vector<const TensorSpec*> inputs() const;
  std::vector<const TensorSpec*> outputs() const;
};

// Makes a problem from dim values in the op's order.
Problem MakeProblem(const OpDef& op, std::vector<int64_t> values, Dtype dtype = Dtype::kUnspecified,
                    std::vector<std::string> flags = {});

// The usual tolerances, per dtype, for elementwise ops and for reductions (their values in op.cc).
Tolerance ElementwiseTolerance(Dtype d);
Tolerance ReductionTolerance(Dtype d);

}  // namespace kbench::kernels
