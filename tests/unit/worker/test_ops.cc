#include "test_ops.h"

#include <memory>
#include <stdexcept>

namespace kbench::worker::testing {
namespace {

using kernels::Dtype;
using kernels::LoadAsDouble;
using kernels::StoreFromDouble;
using kernels::Tensor;

void Scale(const Tensor& x, const Tensor& out, int64_t begin, int64_t end, double bump_from) {
  for (int64_t i = begin; i < end; ++i)
    StoreFromDouble(out.data, out.dtype, i, 2 * LoadAsDouble(x.data, x.dtype, i) + (i >= bump_from ? 1 : 0));
}

kernels::Variant Cpu(std::string name, std::function<void(const kernels::Problem&, std::span<const Tensor>)> run) {
  kernels::Variant v;
  v.name = std::move(name);
  v.description = "test variant";
  v.backend = kernels::Backend::kCpu;
  v.dtypes = {Dtype::kF32, Dtype::kBF16};
  v.run_cpu = std::move(run);
  return v;
}

}  // namespace

kernels::OpDef MakeScaleOp() {
  kernels::OpDef op;
  op.name = "scale";
  op.description = "out = 2 x";
  op.dims = {"n"};
  op.dtypes = {Dtype::kF32, Dtype::kBF16};
  op.tensors = {{.name = "x", .dims = {"n"}}, {.name = "out", .dims = {"n"}, .is_output = true}};
  op.max_dim = int64_t{1} << 20;
  op.cost = [](const kernels::Problem& p) {
    const double n = static_cast<double>(p.dim("n"));
    return kernels::Cost{.bytes_read = n * kernels::DtypeBytes(p.dtype), .bytes_written = n * kernels::DtypeBytes(p.dtype), .flops = n};
  };
  op.reference = [](const kernels::Problem& p, std::span<const Tensor> in, std::vector<std::vector<double>>& out) {
    for (int64_t i = 0; i < p.dim("n"); ++i) out[0][static_cast<size_t>(i)] = 2 * LoadAsDouble(in[0].data, in[0].dtype, i);
  };
  op.tolerance = kernels::ElementwiseTolerance;
  op.validate = [](const kernels::Problem& p) -> std::string { return p.dim("n") == 13 ? "n must not be 13" : ""; };
  op.presets = {{"small", {kernels::MakeProblem(op, {64})}},
                {"edge", {kernels::MakeProblem(op, {1}), kernels::MakeProblem(op, {7})}}};

  const auto n = [](const kernels::Problem& p) { return p.dim("n"); };
  op.variants.push_back(Cpu("cpu_good", [n](const auto& p, auto t) { Scale(t[0], t[1], 0, n(p), 1e18); }));
  op.variants.push_back(Cpu("cpu_wrong", [n](const auto& p, auto t) { Scale(t[0], t[1], 0, n(p), 3); }));
  op.variants.push_back(Cpu("cpu_lazy", [n](const auto& p, auto t) { Scale(t[0], t[1], 0, n(p) / 2, 1e18); }));
  op.variants.push_back(Cpu("cpu_throws", [](const auto&, auto) { throw std::runtime_error("boom"); }));
  kernels::Variant small = Cpu("cpu_small", [n](const auto& p, auto t) { Scale(t[0], t[1], 0, n(p), 1e18); });
  small.skip_reason = [n](const kernels::Problem& p) -> std::string { return n(p) > 100 ? "n > 100" : ""; };
  op.variants.push_back(small);
  kernels::Variant f32 = Cpu("cpu_f32", [n](const auto& p, auto t) { Scale(t[0], t[1], 0, n(p), 1e18); });
  f32.dtypes = {Dtype::kF32};
  op.variants.push_back(f32);
  kernels::Variant cuda;
  cuda.name = "cuda_good";
  cuda.backend = kernels::Backend::kCuda;
  cuda.dtypes = {Dtype::kF32, Dtype::kBF16};
  cuda.min_compute_capability = 80;
  cuda.run_cuda = [](const kernels::Problem&, std::span<const Tensor>, void*) { return 0; };
  op.variants.push_back(cuda);
  return op;
}

kernels::Variant MakeQuittingVariant(int working_calls) {
  auto calls = std::make_shared<int>(0);
  return Cpu("cpu_quits", [calls, working_calls](const kernels::Problem& p, std::span<const Tensor> t) {
    if ((*calls)++ < working_calls) Scale(t[0], t[1], 0, p.dim("n"), 1e18);
  });
}

const kernels::Registry& TestRegistry() {
  static const kernels::Registry* registry = [] {
    auto* r = new kernels::Registry;
    r->Add(MakeScaleOp());
    return r;
  }();
  return *registry;
}

CpuHostInfo TestHost() {
  CpuHostInfo h;
  h.model = "Test CPU";
  h.threads = 2;
  h.memory_bytes = int64_t{8} << 30;
  h.llc_bytes = int64_t{256} << 10;
  h.kernel_release = "6.0.0-test";
  h.hostname = "test-host";
  h.clock_khz = 3'000'000;
  return h;
}

v1::MeasurementSettings TinySettings() {
  v1::MeasurementSettings s;
  s.set_warmup_ns(1);
  s.set_min_samples(3);
  s.set_max_samples(5);
  s.set_min_time_ns(1);
  s.set_max_time_ns(1'000'000);
  s.set_correctness_trials(2);
  return s;
}

}  // namespace kbench::worker::testing
