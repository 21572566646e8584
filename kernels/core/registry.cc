#include "core/registry.h"

#include <utility>

namespace kbench::kernels {

void Registry::Add(OpDef op) { ops_.push_back(std::move(op)); }

OpDef* Registry::FindMutable(std::string_view name) {
  for (auto& op : ops_)
    if (op.name == name) return &op;
  return nullptr;
}

const OpDef* Registry::Find(std::string_view name) const {
  for (const auto& op : ops_)
    if (op.name == name) return &op;
  return nullptr;
}

Registry RegistryOf(std::span<const OpFactory> factories) {
  Registry r;
  for (const OpFactory make : factories) r.Add(make());
  return r;
}

const char* SuiteVersion() { return KBENCH_SUITE_VERSION; }

bool BuiltWithCuda() {
#ifdef KBENCH_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace kbench::kernels
