// The fault-injection op: variants that crash, hang, write out of bounds or compute a wrong answer,
// so tests can prove that a bad kernel costs one result and never the worker. Registered only when
// the environment has KBENCH_FAULT_INJECTION=1; production workers never list it.
#pragma once

#include "core/op.h"

namespace kbench::kernels {

bool FaultInjectionEnabled();
OpDef MakeFaultInjectionOp();                 // with its CPU variants
void AddFaultInjectionCudaVariants(OpDef& op);  // fault_injection.cu, CUDA builds only

}  // namespace kbench::kernels
