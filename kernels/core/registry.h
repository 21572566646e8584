// The registry of ops. BuiltinRegistry() holds the suite compiled into this library (kernels/suite.h):
// every op with its CPU variants, and its CUDA variants when the library was built with CUDA.
#pragma once

#include <span>
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

// What an op's folder gives a suite: a function returning the op with every rung of this build.
using OpFactory = OpDef (*)();

// A list of ops is one macro, OPS(X), calling X(factory) once per op (kernels/suite.h). These two
// expand it into the factories' declarations and into the elements of an OpFactory array, so a
// factory is named once, on its own line.
#define KBENCH_DECLARE_OP(factory) OpDef factory();
#define KBENCH_LIST_OP(factory) factory,

// The ops the factories return, in their order.
Registry RegistryOf(std::span<const OpFactory> factories);

// The built-in suite (kernels/suite.cc).
const Registry& BuiltinRegistry();

// Version of the kernel suite, reported by workers.
const char* SuiteVersion();
bool BuiltWithCuda();

}  // namespace kbench::kernels
