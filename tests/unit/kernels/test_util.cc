// Helpers of the kernel tests (see test_util.h).
#include "test_util.h"

#include <cstdlib>

#include "core/random.h"
#include "core/registry.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {

namespace {

constexpr size_t kGuardWords = 64;
constexpr float kGuard = 1234.5f;

size_t DataWords(const Tensor& t) { return static_cast<size_t>((t.numel * DtypeBytes(t.dtype) + 3) / 4); }

}  // namespace

void HostTensors::Add(int64_t numel, Dtype d) {
  const Tensor t{.data = nullptr, .numel = numel, .dtype = d};
  storage.emplace_back(DataWords(t) + kGuardWords, kGuard);
  tensors.push_back({.data = storage.back().data(), .numel = numel, .dtype = d});
}

bool HostTensors::GuardsIntact() const {
  for (size_t i = 0; i < tensors.size(); ++i)
    for (size_t w = DataWords(tensors[i]); w < storage[i].size(); ++w)
      if (storage[i][w] != kGuard) return false;
  return true;
}

HostTensors Allocate(const OpDef& op, const Problem& p) {
  HostTensors h;
  h.problem = p;
  h.storage.reserve(op.tensors.size());  // Tensor::data points into storage: no reallocation.
  for (const TensorSpec* s : op.inputs()) h.Add(s->numel(p), s->dtype(p));
  h.num_inputs = h.tensors.size();
  for (const TensorSpec* s : op.outputs()) h.Add(s->numel(p), s->dtype(p));
  return h;
}

void FillInputsPoisonOutputs(const OpDef& op, HostTensors& h, uint64_t seed) {
  const auto specs = op.inputs();
  for (size_t i = 0; i < h.num_inputs; ++i) FillInput(*specs[i], h.problem, h.tensors[i], seed, i);
  for (const Tensor& t : h.outputs()) Poison(t);
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel));
  for (int64_t i = 0; i < t.numel; ++i) v[i] = LoadAsDouble(t.data, t.dtype, i);
  return v;
}

HostTensors FromValues(const std::vector<std::vector<double>>& values, Dtype d) {
  HostTensors h;
  h.storage.reserve(values.size());
  for (const auto& v : values) {
    h.Add(static_cast<int64_t>(v.size()), d);
    for (size_t i = 0; i < v.size(); ++i) StoreFromDouble(h.tensors.back().data, d, static_cast<int64_t>(i), v[i]);
  }
  h.num_inputs = h.tensors.size();
  return h;
}

std::vector<std::vector<double>> RunReference(const OpDef& op, const Problem& p, std::span<const Tensor> inputs) {
  std::vector<std::vector<double>> out;
  for (const TensorSpec* s : op.outputs()) out.emplace_back(static_cast<size_t>(s->numel(p)));
  op.reference(p, inputs, out);
  return out;
}

Tolerance ToleranceFor(const OpDef& op, const Problem& p) {
  return op.problem_tolerance ? op.problem_tolerance(p) : op.tolerance(p.dtype);
}

std::vector<VariantCheck> CheckCpuVariants(const OpDef& op, const Problem& p, uint64_t seed) {
  HostTensors h = Allocate(op, p);
  FillInputsPoisonOutputs(op, h, seed);
  const auto ref = RunReference(op, p, h.inputs());
  std::vector<VariantCheck> checks;
  for (const Variant& v : op.variants) {
    if (v.backend != Backend::kCpu) continue;
    for (const Tensor& t : h.outputs()) Poison(t);
    v.run_cpu(p, h.tensors);
    EXPECT_TRUE(h.GuardsIntact()) << v.name << " wrote past the end of a tensor on " << p.label();
    CompareResult result;
    for (size_t i = 0; i < ref.size(); ++i)
      Merge(result, Compare(ToDoubles(h.outputs()[i]), ref[i], ToleranceFor(op, p), h.outputs()[i].dtype));
    checks.push_back({v.name, result});
  }
  return checks;
}

const OpDef& GetOp(std::string_view name) {
  const OpDef* op = BuiltinRegistry().Find(name);
  if (op == nullptr) {
    ADD_FAILURE() << "op " << name << " is not registered";
    std::abort();
  }
  return *op;
}

}  // namespace kbench::kernels::testing
