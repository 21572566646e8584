// Catalog merging over workers.
#include "server/coordinator/catalog.h"

#include <algorithm>
#include <map>
#include <string>

namespace kbench::server {
namespace {

// Appends the items of `from` whose key is not yet in `to`.
template <typename Field, typename Key>
void UniteBy(const Field& from, Field* to, Key key) {
  for (const auto& item : from)
    if (std::none_of(to->begin(), to->end(), [&](const auto& x) { return key(x) == key(item); })) *to->Add() = item;
}

}  // namespace

std::vector<v1::OpInfo> MergeCatalogs(const std::vector<const v1::WorkerInfo*>& workers) {
  std::map<std::string, v1::OpInfo> merged;  // Sorted by name.
  for (const v1::WorkerInfo* w : workers) {
    for (const v1::OpInfo& op : w->catalog()) {
      auto [it, inserted] = merged.try_emplace(op.name(), op);
      if (inserted) continue;
      v1::OpInfo& into = it->second;
      UniteBy(op.variants(), into.mutable_variants(), [](const v1::VariantInfo& v) { return v.name(); });
      UniteBy(op.presets(), into.mutable_presets(), [](const v1::PresetInfo& p) { return p.name(); });
      UniteBy(op.dtypes(), into.mutable_dtypes(), [](int d) { return d; });
      UniteBy(op.flags(), into.mutable_flags(), [](const std::string& f) { return f; });
      // The launch contract comes with CUDA workers only: any worker that has it gives it.
      if (!into.has_contract() && op.has_contract()) *into.mutable_contract() = op.contract();
    }
  }
  std::vector<v1::OpInfo> out;
  out.reserve(merged.size());
  for (auto& [name, op] : merged) out.push_back(std::move(op));
  return out;
}

}  // namespace kbench::server
