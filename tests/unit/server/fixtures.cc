// Test data for the coordinator tests.
#include "fixtures.h"

#include <atomic>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kbench::server::testing {
namespace {

v1::Problem Shape(std::initializer_list<std::pair<const char*, int64_t>> dims) {
  v1::Problem p;
  for (auto [name, value] : dims) {
    v1::Dim* d = p.add_dims();
    d->set_name(name);
    d->set_value(value);
  }
  return p;
}

void AddTensor(v1::OpInfo* op, const char* name, std::initializer_list<const char*> dims, bool output) {
  v1::TensorInfo* t = op->add_tensors();
  t->set_name(name);
  for (const char* d : dims) t->add_dims(d);
  t->set_is_output(output);
}

}  // namespace

v1::OpInfo RmsnormOp() {
  v1::OpInfo op;
  op.set_name("rmsnorm");
  op.add_dims("rows");
  op.add_dims("cols");
  op.add_dtypes(v1::DTYPE_F32);
  op.add_dtypes(v1::DTYPE_BF16);
  op.set_max_dim_value(int64_t{1} << 31);
  AddTensor(&op, "x", {"rows", "cols"}, false);
  AddTensor(&op, "weight", {"cols"}, false);
  AddTensor(&op, "out", {"rows", "cols"}, true);
  for (const char* v : {"cpu_naive", "cpu_blocked"}) {
    v1::VariantInfo* var = op.add_variants();
    var->set_name(v);
    var->set_backend(v1::BACKEND_CPU);
    var->add_dtypes(v1::DTYPE_F32);
  }
  v1::PresetInfo* small = op.add_presets();
  small->set_name("small");
  *small->add_problems() = Shape({{"rows", 64}, {"cols", 1024}});
  v1::PresetInfo* edge = op.add_presets();
  edge->set_name("edge");
  *edge->add_problems() = Shape({{"rows", 1}, {"cols", 769}});
  return op;
}

v1::OpInfo VectorAddOp() {
  v1::OpInfo op;
  op.set_name("vector_add");
  op.add_dims("n");
  op.add_dtypes(v1::DTYPE_F32);
  AddTensor(&op, "a", {"n"}, false);
  AddTensor(&op, "b", {"n"}, false);
  AddTensor(&op, "out", {"n"}, true);
  op.add_variants()->set_name("cpu_naive");
  v1::PresetInfo* small = op.add_presets();
  small->set_name("small");
  *small->add_problems() = Shape({{"n", 4096}});
  return op;
}

v1::WorkerInfo CpuWorker(const std::string& name, int64_t memory_bytes) {
  v1::WorkerInfo w;
  w.set_name(name);
  v1::DeviceInfo* d = w.add_devices();
  d->set_backend(v1::BACKEND_CPU);
  d->set_name("AMD EPYC 7B13");
  d->set_memory_bytes(memory_bytes);
  *w.add_catalog() = RmsnormOp();
  return w;
}

v1::WorkerInfo CudaWorker(const std::string& name, const std::string& device_name, int cc_major, int cc_minor,
                          int64_t memory_bytes) {
  v1::WorkerInfo w;
  w.set_name(name);
  v1::DeviceInfo* d = w.add_devices();
  d->set_backend(v1::BACKEND_CUDA);
  d->set_name(device_name);
  d->set_compute_capability_major(cc_major);
  d->set_compute_capability_minor(cc_minor);
  d->set_memory_bytes(memory_bytes);
  *w.add_catalog() = RmsnormOp();
  return w;
}

v1::JobSpec RmsnormSpec(int64_t rows, int64_t cols) {
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  v1::Problem* p = spec.add_problems()->mutable_shape();
  p->add_dims()->set_value(rows);
  p->add_dims()->set_value(cols);
  p->set_dtype(v1::DTYPE_F32);
  return spec;
}

v1::Result OkResult(int index, int samples) {
  v1::Result r;
  r.set_index(index);
  r.set_op("rmsnorm");
  r.set_variant("cpu_naive");
  r.set_status(v1::OK);
  *r.mutable_problem() = Shape({{"rows", 64}, {"cols", 1024}});
  r.mutable_problem()->set_dtype(v1::DTYPE_F32);
  for (int i = 0; i < samples; ++i) r.mutable_timing()->add_samples_ns(1000.0 + i);
  r.mutable_timing()->set_median_ns(1000.0 + samples / 2);
  r.mutable_timing()->set_count(samples);
  return r;
}

std::string TempDbPath() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              absl::StrCat("kbench_server_", ::getpid(), "_", counter++, "_", info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "kbench.db").string();
}

}  // namespace kbench::server::testing
