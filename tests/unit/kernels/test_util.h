// Helpers of the kernel tests: host buffers for an op's tensors, seeded inputs, and one correctness
// check of a CPU variant against the op's reference (poisoned outputs, Compare with the op's tolerance).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/compare.h"
#include "core/op.h"

namespace kbench::kernels::testing {

// Host storage for tensors: inputs first, then outputs, as the op orders them.
struct HostTensors {
  std::vector<std::vector<float>> storage;  // float-sized words: aligned for f32 and bf16 alike.
  std::vector<Tensor> tensors;
  size_t num_inputs = 0;
  Problem problem;  // The problem Allocate sized these for (inputs with their own fill need it).

  std::span<const Tensor> inputs() const { return std::span(tensors).first(num_inputs); }
  std::span<const Tensor> outputs() const { return std::span(tensors).subspan(num_inputs); }
  void Add(int64_t numel, Dtype d);
  // Every buffer is followed by guard words; false when a write ran past a tensor's end.
  bool GuardsIntact() const;
};

HostTensors Allocate(const OpDef& op, const Problem& p);
// Seeded inputs (each spec's fill, else uniform in its init range; stream = tensor index); outputs poisoned.
void FillInputsPoisonOutputs(const OpDef& op, HostTensors& h, uint64_t seed);
std::vector<double> ToDoubles(const Tensor& t);
// Input tensors of dtype d holding the given values (rounded to d), for hand-made examples.
HostTensors FromValues(const std::vector<std::vector<double>>& values, Dtype d);
// The op's reference on these inputs: one vector per output.
std::vector<std::vector<double>> RunReference(const OpDef& op, const Problem& p, std::span<const Tensor> inputs);

// The tolerance a correctness check uses: problem_tolerance when the op has one, else tolerance(dtype).
Tolerance ToleranceFor(const OpDef& op, const Problem& p);

// Runs each of the op's CPU variants on the same seeded inputs (outputs poisoned before each run) and
// compares every output with the reference, computed once. Also checks that no variant wrote past
// the end of a tensor.
struct VariantCheck {
  std::string variant;
  CompareResult result;
};
std::vector<VariantCheck> CheckCpuVariants(const OpDef& op, const Problem& p, uint64_t seed);

// The op from BuiltinRegistry(); aborts the test when absent.
const OpDef& GetOp(std::string_view name);

}  // namespace kbench::kernels::testing
