#include "core/registry.h"

#include "core/builtin_ops.h"
#include "testing/fault_injection.h"

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

namespace {

Registry Build() {
  Registry r;
  {
    OpDef op = MakeVectorAddOp();
    AddVectorAddCpuVariants(op);
    r.Add(std::move(op));
  }
  {
    OpDef op = MakeRmsnormOp();
    AddRmsnormCpuVariants(op);
    r.Add(std::move(op));
  }
  {
    OpDef op = MakeSoftmaxOp();
    AddSoftmaxCpuVariants(op);
    r.Add(std::move(op));
  }
  {
    OpDef op = MakeGemmOp();
    AddGemmCpuVariants(op);
    r.Add(std::move(op));
  }
  AddMemoryBoundOps(r);
#ifdef KBENCH_HAVE_CUDA
  AddCudaVariants(r);
#endif
  if (FaultInjectionEnabled()) {
    OpDef op = MakeFaultInjectionOp();
#ifdef KBENCH_HAVE_CUDA
    AddFaultInjectionCudaVariants(op);
#endif
    r.Add(std::move(op));
  }
  return r;
}

}  // namespace

const Registry& BuiltinRegistry() {
  static const Registry* registry = new Registry(Build());
  return *registry;
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
