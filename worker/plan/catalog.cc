#include "worker/plan/catalog.h"

#include <algorithm>

#include "worker/runner/convert.h"
#include "worker/custom/contract.h"

namespace kbench::worker {

v1::OpInfo ToOpInfo(const kernels::OpDef& op, const std::set<kernels::Backend>& backends) {
  v1::OpInfo info;
  info.set_name(op.name);
  info.set_description(op.description);
  for (const auto& d : op.dims) info.add_dims(d);
  std::set<kernels::Dtype> variant_dtypes;
  for (const kernels::Variant& v : op.variants) {
    if (!backends.contains(v.backend)) continue;
    v1::VariantInfo* vi = info.add_variants();
    vi->set_name(v.name);
    vi->set_description(v.description);
    vi->set_backend(ToProtoBackend(v.backend));
    for (kernels::Dtype d : v.dtypes) {
      vi->add_dtypes(ToProtoDtype(d));
      variant_dtypes.insert(d);
    }
    vi->set_min_compute_capability(v.min_compute_capability);
    vi->set_is_baseline(v.is_baseline);
  }
  for (kernels::Dtype d : op.dtypes)
    if (variant_dtypes.contains(d)) info.add_dtypes(ToProtoDtype(d));
  for (const kernels::TensorSpec& t : op.tensors) {
    v1::TensorInfo* ti = info.add_tensors();
    ti->set_name(t.name);
    for (const auto& d : t.dims) ti->add_dims(d);
    ti->set_is_output(t.is_output);
    ti->set_fixed_dtype(ToProtoDtype(t.fixed_dtype));
  }
  for (const kernels::Preset& p : op.presets) {
    v1::PresetInfo* pi = info.add_presets();
    pi->set_name(p.name);
    for (const kernels::Problem& problem : p.problems) *pi->add_problems() = ToProtoProblem(problem);
  }
  for (const auto& f : op.flags) info.add_flags(f);
  info.set_max_dim_value(op.max_dim);
  for (const kernels::DerivedDim& d : op.derived_dims) {
    v1::DerivedDim* di = info.add_derived_dims();
    di->set_name(d.name);
    di->set_expr(d.expr);
  }
  for (const auto& d : op.zero_dims) info.add_zero_dims(d);
  // Custom kernels run on CUDA devices only (worker/custom/README.md).
  if (backends.contains(kernels::Backend::kCuda)) {
    if (std::optional<v1::LaunchContract> contract = MakeLaunchContract(op)) *info.mutable_contract() = *contract;
  }
  return info;
}

Catalog::Catalog(const kernels::Registry& registry, std::set<kernels::Backend> backends) {
  for (const kernels::OpDef& op : registry.ops()) {
    v1::OpInfo info = ToOpInfo(op, backends);
    if (info.variants().empty()) continue;
    defs_.push_back(&op);
    infos_.push_back(std::move(info));
  }
}

const v1::OpInfo* Catalog::FindInfo(std::string_view name) const {
  for (const auto& info : infos_)
    if (info.name() == name) return &info;
  return nullptr;
}

const kernels::OpDef* Catalog::FindOp(std::string_view name) const {
  for (const auto* op : defs_)
    if (op->name == name) return op;
  return nullptr;
}

}  // namespace kbench::worker
