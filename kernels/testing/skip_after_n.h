// Test-only variants of the fault-injection op (testing/fault_injection.h) that do their work at
// first and then stop: the kernel that passes the check before timing and skips once warm, which
// the pipeline's check after timing (worker/measure/pipeline.cc) must call INCORRECT. Registered
// beside the fault-injection op in the test kernel library (testing_plugin.cc), which tests send with
// their job as its plugin.
//   cpu_quits_after_n   out = x for its first kSkipAfterCalls calls in the process, then writes nothing
//   cuda_quits_after_n  the same on the device (the count is of host calls: launches and captures)
//   cuda_quits_in_graph out = x when launched, nothing when captured into a graph: only the HOT
//                       samples' graph replay skips, so only the check of that replay catches it
#pragma once

#include "core/op.h"

namespace kbench::kernels {

// The check's default number of trials (worker/settings.h): with that many, the check passes and the
// first timed launch is the first to skip. Counted per variant and process: a runner measures such
// a variant once.
inline constexpr int kSkipAfterCalls = 3;

void AddSkipAfterNVariants(OpDef& fault_injection_op);      // skip_after_n.cc: the CPU one
void AddSkipAfterNCudaVariants(OpDef& fault_injection_op);  // skip_after_n.cu, CUDA builds only

}  // namespace kbench::kernels
