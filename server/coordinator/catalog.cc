// Catalog merging over workers.
#include "server/coordinator/catalog.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

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
      // So do derived dims (a worker built before them has none): shapes are resolved in full here,
      // so every worker gets every dim.
      if (into.derived_dims().empty()) *into.mutable_derived_dims() = op.derived_dims();
      UniteBy(op.zero_dims(), into.mutable_zero_dims(), [](const std::string& d) { return d; });
    }
  }
  std::vector<v1::OpInfo> out;
  out.reserve(merged.size());
  for (auto& [name, op] : merged) out.push_back(std::move(op));
  return out;
}

std::string CatalogKey(const v1::WorkerInfo& worker) {
  std::string key;
  {
    google::protobuf::io::StringOutputStream stream(&key);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);  // Equal catalogs, equal bytes (map fields in key order).
    for (const v1::OpInfo& op : worker.catalog()) {
      // Length-prefixed, so that no two different sequences of ops give the same bytes.
      out.WriteVarint64(op.ByteSizeLong());
      op.SerializeWithCachedSizes(&out);
    }
  }
  return key;
}

std::vector<v1::OpInfo> MergeDistinctCatalogs(const std::vector<const v1::WorkerInfo*>& workers) {
  std::unordered_set<std::string> seen;
  std::vector<const v1::WorkerInfo*> distinct;
  for (const v1::WorkerInfo* w : workers)
    if (seen.insert(CatalogKey(*w)).second) distinct.push_back(w);
  return MergeCatalogs(distinct);
}

}  // namespace kbench::server
