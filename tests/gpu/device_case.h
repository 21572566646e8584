// A problem's tensors on the device, filled as the worker fills them, checked against the op's fp64
// device reference: what the GPU tests of the large attention shapes share (attention_gpu_test,
// attention_varlen_gpu_test), whose CPU reference would take minutes there.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/compare.h"
#include "core/op.h"

namespace kbench::kernels::testing {

// Device memory freed at scope exit.
struct DeviceMem {
  void* p = nullptr;
  DeviceMem() = default;
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  ~DeviceMem() {
    if (p) cudaFree(p);
  }
  cudaError_t Allocate(size_t bytes) { return cudaMalloc(&p, bytes == 0 ? 16 : bytes); }
};

// Every problem of the named presets, in order.
std::vector<Problem> Presets(const OpDef& op, std::initializer_list<const char*> names);

// The op's tensors for `p`, in spec order: inputs filled with FillInput(seed) on the host (kept in
// `host`) and copied over, outputs poisoned with 0xFF bytes (NaN in f32, bf16 and f16). `error` is
// empty unless an allocation or copy failed.
struct DeviceCase {
  std::vector<std::unique_ptr<DeviceMem>> mem;
  std::vector<Tensor> tensors;
  std::vector<std::vector<unsigned char>> host;
  std::string error;

  DeviceCase(const OpDef& op, const Problem& p, uint64_t seed);
  std::span<const Tensor> inputs(size_t n) const { return std::span<const Tensor>(tensors).first(n); }
  // Tensor i copied back and widened to double.
  std::vector<double> Output(size_t i) const;
  // Every output set back to the 0xFF poison; false if a memset failed.
  bool PoisonOutputs(const OpDef& op);
};

// op.gpu_reference on the case's inputs: one vector per output spec. Empty, with *error set, on failure.
std::vector<std::vector<double>> DeviceReference(const OpDef& op, const Problem& p, const DeviceCase& c,
                                                 std::string* error);

// Runs v on the case (outputs poisoned first, so an element it leaves unwritten fails) and compares
// each output with the device reference on the same inputs within the op's tolerance (gtest
// failures naming the output); prints each output's largest error, labelled `what`.
void RunAndCompare(const OpDef& op, const Variant& v, const Problem& p, DeviceCase& c, const std::string& what);

}  // namespace kbench::kernels::testing
