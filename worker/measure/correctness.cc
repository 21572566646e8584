#include "worker/measure/correctness.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compare.h"
#include "core/random.h"

namespace kbench::worker {

absl::StatusOr<v1::Correctness> CheckCorrectness(const kernels::OpDef& op, const kernels::Problem& problem,
                                                 const HostTensors& tensors, const v1::MeasurementSettings& settings,
                                                 const RunOnHost& run, const InterruptCheck& interrupted,
                                                 const ReferenceFn& reference) {
  const ReferenceFn& expect = reference ? reference : op.reference;
  if (!expect) return absl::FailedPreconditionError(absl::StrCat("op '", op.name, "' has no reference"));
  // A problem-dependent tolerance (a K-term sum's rounding grows with K) wins over the dtype's.
  const kernels::Tolerance tol = op.problem_tolerance ? op.problem_tolerance(problem)
                                 : op.tolerance      ? op.tolerance(problem.dtype)
                                                     : kernels::Tolerance{};
  std::vector<size_t> input_index, output_index;
  for (size_t i = 0; i < op.tensors.size(); ++i) (op.tensors[i].is_output ? output_index : input_index).push_back(i);

  const int trials = std::max(1, settings.correctness_trials());
  kernels::CompareResult merged;
  std::vector<kernels::Tensor> inputs;
  for (size_t i : input_index) inputs.push_back(tensors[i]);
  std::vector<std::vector<double>> expected(output_index.size());
  std::vector<double> actual;
  for (int trial = 0; trial < trials; ++trial) {
    if (interrupted) {
      if (absl::Status s = interrupted(); !s.ok()) return s;
    }
    const uint64_t seed = settings.seed() + static_cast<uint64_t>(trial);
    for (size_t k = 0; k < input_index.size(); ++k) {
      const kernels::TensorSpec& spec = op.tensors[input_index[k]];
      kernels::FillInput(spec, problem, tensors[input_index[k]], seed, k);
    }
    for (size_t i : output_index) kernels::Poison(tensors[i]);
    if (absl::Status s = run(tensors.all()); !s.ok()) return s;

    for (size_t k = 0; k < output_index.size(); ++k)
      expected[k].assign(static_cast<size_t>(tensors[output_index[k]].numel), 0.0);
    expect(problem, inputs, expected);
    for (size_t k = 0; k < output_index.size(); ++k) {
      const kernels::Tensor& out = tensors[output_index[k]];
      actual.resize(static_cast<size_t>(out.numel));
      for (int64_t e = 0; e < out.numel; ++e) actual[static_cast<size_t>(e)] = kernels::LoadAsDouble(out.data, out.dtype, e);
      kernels::Merge(merged, kernels::Compare(actual, expected[k], tol, out.dtype));
    }
  }

  v1::Correctness c;
  c.set_passed(merged.passed);
  c.set_trials(trials);
  c.set_max_abs_error(merged.max_abs_error);
  c.set_max_rel_error(merged.max_rel_error);
  c.set_rel_l2_error(merged.rel_l2_error);
  c.set_mismatches(merged.mismatches);
  c.set_first_mismatch_index(merged.first_mismatch);
  c.set_rtol(tol.rtol);
  c.set_atol(tol.atol);
  c.set_reference(kCpuReferenceName);
  c.set_non_finite(merged.non_finite);
  return c;
}

std::string DescribeFailure(const v1::Correctness& c) {
  std::string s = absl::StrCat(c.mismatches(), " mismatching elements over ", c.trials(), " trials");
  if (c.first_mismatch_index() >= 0) absl::StrAppend(&s, " (first at index ", c.first_mismatch_index(), ")");
  if (c.non_finite() > 0) absl::StrAppend(&s, ", ", c.non_finite(), " non-finite (NaN/inf or unwritten)");
  absl::StrAppend(&s, "; max abs error ", c.max_abs_error(), ", max rel error ", c.max_rel_error(),
                  " (rtol ", c.rtol(), ", atol ", c.atol(), ")");
  return s;
}

}  // namespace kbench::worker
