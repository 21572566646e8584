// See device_case.h.
#include "device_case.h"

#include <cstdio>

#include "core/random.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {

std::vector<Problem> Presets(const OpDef& op, std::initializer_list<const char*> names) {
  std::vector<Problem> out;
  for (const char* name : names)
    for (const Problem& p : op.find_preset(name)->problems) out.push_back(p);
  return out;
}

DeviceCase::DeviceCase(const OpDef& op, const Problem& p, uint64_t seed) {
  size_t input = 0;
  for (const TensorSpec& spec : op.tensors) {
    const Dtype d = spec.dtype(p);
    const int64_t n = spec.numel(p);
    const size_t bytes = static_cast<size_t>(n * DtypeBytes(d));
    mem.push_back(std::make_unique<DeviceMem>());
    host.emplace_back(spec.is_output ? 0 : bytes);
    if (const cudaError_t e = mem.back()->Allocate(bytes); e != cudaSuccess) error = "cudaMalloc: " + CudaText(e);
    tensors.push_back(Tensor{mem.back()->p, n, d});
    if (!error.empty()) continue;
    cudaError_t e = cudaSuccess;
    if (spec.is_output) {
      e = cudaMemset(mem.back()->p, 0xFF, bytes);
    } else {
      FillInput(spec, p, Tensor{host.back().data(), n, d}, seed, input++);
      e = cudaMemcpy(mem.back()->p, host.back().data(), bytes, cudaMemcpyHostToDevice);
    }
    if (e != cudaSuccess) error = "cudaMemcpy/cudaMemset: " + CudaText(e);
  }
}

std::vector<double> DeviceCase::Output(size_t i) const {
  const Tensor& t = tensors[i];
  std::vector<unsigned char> raw(static_cast<size_t>(t.numel * DtypeBytes(t.dtype)));
  cudaMemcpy(raw.data(), t.data, raw.size(), cudaMemcpyDeviceToHost);
  std::vector<double> out(static_cast<size_t>(t.numel));
  for (int64_t e = 0; e < t.numel; ++e) out[e] = LoadAsDouble(raw.data(), t.dtype, e);
  return out;
}

bool DeviceCase::PoisonOutputs(const OpDef& op) {
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    if (!op.tensors[i].is_output) continue;
    const Tensor& t = tensors[i];
    if (cudaMemset(t.data, 0xFF, static_cast<size_t>(t.numel * DtypeBytes(t.dtype))) != cudaSuccess) return false;
  }
  return true;
}

std::vector<std::vector<double>> DeviceReference(const OpDef& op, const Problem& p, const DeviceCase& c,
                                                 std::string* error) {
  size_t inputs = 0;
  std::vector<size_t> outputs;  // tensor indices of the output specs
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    if (op.tensors[i].is_output) {
      outputs.push_back(i);
    } else if (!outputs.empty()) {
      *error = "input " + op.tensors[i].name + " follows an output: gpu_reference takes the inputs first";
      return {};
    } else {
      ++inputs;
    }
  }
  std::vector<DeviceMem> mem(outputs.size());
  std::vector<double*> ptrs;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (mem[k].Allocate(static_cast<size_t>(c.tensors[outputs[k]].numel) * sizeof(double)) != cudaSuccess) {
      *error = "cudaMalloc (reference outputs)";
      return {};
    }
    ptrs.push_back(static_cast<double*>(mem[k].p));
  }
  const int rc = op.gpu_reference(p, c.inputs(inputs), ptrs, nullptr);
  if (rc != 0 || cudaDeviceSynchronize() != cudaSuccess) {
    *error = "gpu_reference failed: " + CudaText(rc ? rc : cudaGetLastError());
    return {};
  }
  std::vector<std::vector<double>> out(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    out[k].resize(static_cast<size_t>(c.tensors[outputs[k]].numel));
    if (cudaMemcpy(out[k].data(), ptrs[k], out[k].size() * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) {
      *error = "cudaMemcpy (reference outputs)";
      return {};
    }
  }
  return out;
}

void RunAndCompare(const OpDef& op, const Variant& v, const Problem& p, DeviceCase& c, const std::string& what) {
  ASSERT_TRUE(c.PoisonOutputs(op));
  const int rc = v.run_cuda(p, c.tensors, nullptr);
  ASSERT_EQ(rc, 0) << CudaText(rc);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::string error;
  const auto want = DeviceReference(op, p, c, &error);
  ASSERT_EQ(error, "");
  const Tolerance tol = ToleranceFor(op, p);
  size_t k = 0;
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    if (!op.tensors[i].is_output) continue;
    const std::string& name = op.tensors[i].name;
    const CompareResult r = Compare(c.Output(i), want[k++], tol);
    EXPECT_TRUE(r.passed) << "output " << name << ": " << r.mismatches << " mismatches, " << r.non_finite
                          << " non-finite, max abs " << r.max_abs_error << " (atol " << tol.atol << "), first at "
                          << r.first_mismatch;
    std::printf("  %s %s %s: %s max abs error %.3g\n", v.name.c_str(), p.label().c_str(), what.c_str(), name.c_str(),
                r.max_abs_error);
  }
}

}  // namespace kbench::kernels::testing
