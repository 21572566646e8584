// Host buffers for an op's tensors on one problem, in the op's tensor order (inputs, then outputs):
// what CPU variants run on, and where device outputs are copied back for the correctness check.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/op.h"

namespace kbench::worker {

class HostTensors {
 public:
  // Allocates (64-byte aligned, never null even when empty); throws std::bad_alloc when out of memory.
  HostTensors(const kernels::OpDef& op, const kernels::Problem& problem);

  std::span<const kernels::Tensor> all() const { return tensors_; }
  const kernels::Tensor& operator[](size_t i) const { return tensors_[i]; }
  size_t size() const { return tensors_.size(); }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<void, Free>> storage_;
  std::vector<kernels::Tensor> tensors_;
};

}  // namespace kbench::worker
