// The fault-injection op: variants that crash, hang, write out of bounds or compute a wrong answer,
// so tests can prove that a bad kernel costs one result and never the worker. Test-only: it is
// built into the test kernel library (testing_plugin.cc, libkbench_test_kernels.so), which tests
// load as a kernel plugin (kbench-client submit --plugin); the production suite never holds it.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

OpDef MakeFaultInjectionOp();                 // with its CPU variants
void AddFaultInjectionCudaVariants(OpDef& op);  // fault_injection.cu, CUDA builds only

}  // namespace kbench::kernels
