#include "core/op.h"

#include <algorithm>

namespace kbench::kernels {

int64_t Problem::dim(std::string_view name) const {
  for (const auto& [n, v] : dims)
    if (n == name) return v;
  return -1;
}

bool Problem::has_flag(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

std::string Problem::label() const {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i].second);
  s += " " + DtypeName(dtype);
  for (const auto& f : flags) s += " " + f;
  return s;
}

int64_t TensorSpec::numel(const Problem& p) const {
  int64_t n = 1;
  for (const auto& d : dims) n *= p.dim(d);
  return n;
}

bool Variant::supports(Dtype d) const { return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end(); }

const Variant* OpDef::find_variant(std::string_view n) const {
  for (const auto& v : variants)
    if (v.name == n) return &v;
  return nullptr;
}

const Preset* OpDef::find_preset(std::string_view n) const {
  for (const auto& p : presets)
    if (p.name == n) return &p;
  return nullptr;
}

std::vector<const TensorSpec*> OpDef::inputs() const {
  std::vector<const TensorSpec*> out;
  for (const auto& t : tensors)
    if (!t.is_output) out.push_back(&t);
  return out;
}

std::vector<const TensorSpec*> OpDef::outputs() const {
  std::vector<const TensorSpec*> out;
  for (const auto& t : tensors)
    if (t.is_output) out.push_back(&t);
  return out;
}

Problem MakeProblem(const OpDef& op, std::vector<int64_t> values, Dtype dtype, std::vector<std::string> flags) {
  Problem p;
  for (size_t i = 0; i < op.dims.size() && i < values.size(); ++i) p.dims.emplace_back(op.dims[i], values[i]);
  p.dtype = dtype;
  p.flags = std::move(flags);
  return p;
}

Tolerance ElementwiseTolerance(Dtype d) {
  switch (d) {
    case Dtype::kBF16: return {1.6e-2, 1e-5};
    case Dtype::kF16: return {1e-3, 1e-5};
    case Dtype::kTF32: return {5e-3, 1e-5};
    default: return {1e-5, 1e-6};
  }
}

Tolerance ReductionTolerance(Dtype d) {
  switch (d) {
    case Dtype::kBF16: return {1.6e-2, 1e-2};
    case Dtype::kF16: return {1e-3, 1e-3};
    case Dtype::kTF32: return {5e-3, 1e-3};
    default: return {1e-5, 1e-5};
  }
}

}  // namespace kbench::kernels
