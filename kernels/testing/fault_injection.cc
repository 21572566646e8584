// The fault-injection op and its CPU variants; see fault_injection.h.
#include "testing/fault_injection.h"

#include <csignal>
#include <cstring>

namespace kbench::kernels {
namespace {

void Copy(std::span<const Tensor> t) { std::memcpy(t[1].data, t[0].data, t[0].numel * sizeof(float)); }

Variant Cpu(std::string name, std::string description, std::function<void(const Problem&, std::span<const Tensor>)> run) {
  Variant v;
  v.name = std::move(name);
  v.description = std::move(description);
  v.backend = Backend::kCpu;
  v.dtypes = {Dtype::kF32};
  v.run_cpu = std::move(run);
  return v;
}

}  // namespace

OpDef MakeFaultInjectionOp() {
  OpDef op;
  op.name = "fault_injection";
  op.description = "Test-only: out = x, by variants that behave, crash, hang or lie";
  op.dims = {"N"};
  op.dtypes = {Dtype::kF32};
  op.tensors = {{.name = "x", .dims = {"N"}}, {.name = "out", .dims = {"N"}, .is_output = true}};
  op.presets = {{"small", {MakeProblem(op, {4096})}}};
  op.cost = [](const Problem& p) { return Cost{.bytes_read = 4.0 * p.dim("N"), .bytes_written = 4.0 * p.dim("N")}; };
  op.reference = [](const Problem& p, std::span<const Tensor> in, std::vector<std::vector<double>>& out) {
    for (int64_t i = 0; i < p.dim("N"); ++i) out[0][i] = static_cast<const float*>(in[0].data)[i];
  };
  op.tolerance = [](Dtype) { return Tolerance{0, 0}; };
  op.variants.push_back(Cpu("cpu_wrong", "adds one to every element", [](const Problem&, std::span<const Tensor> t) {
    for (int64_t i = 0; i < t[0].numel; ++i)
      static_cast<float*>(t[1].data)[i] = static_cast<const float*>(t[0].data)[i] + 1.0f;
  }));
  op.variants.push_back(Cpu("cpu_segfault", "dereferences an invalid pointer", [](const Problem&, std::span<const Tensor>) {
    std::raise(SIGSEGV);
  }));
  op.variants.push_back(Cpu("cpu_hang", "never returns", [](const Problem&, std::span<const Tensor>) {
    volatile bool forever = true;
    while (forever) {
    }
  }));
  op.variants.push_back(Cpu("cpu_ok", "copies correctly", [](const Problem&, std::span<const Tensor> t) { Copy(t); }));
  return op;
}

}  // namespace kbench::kernels
