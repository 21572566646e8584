// The registry of ops. BuiltinRegistry() holds the suite compiled into this library: every op with its
// CPU variants, and its CUDA variants when the library was built with CUDA.
#pragma once

#include <string_view>
#include <vector>

#include "core/op.h"

namespace kbench::kernels {

class Registry {
 public:
  void Add(OpDef op);
  OpDef* FindMutable(std::string_view name);
  const OpDef* Find(std::string_view name) const;
  const std::vector<OpDef>& ops() const { return ops_; }

 private:
  std::vector<OpDef> ops_;
};

const Registry& BuiltinRegistry();

// Version of the kernel suite, reported by workers.
const char* SuiteVersion();
bool BuiltWithCuda();

}  // namespace kbench::kernels
