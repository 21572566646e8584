// The runner's handler of a MEASURE request that carries a custom kernel (RunnerRequest.custom): the
// op comes from the suite the runner was built with, the kernel from the request. In a build without
// CUDA the answer is a RUNTIME_ERROR result.
#pragma once

#include "kbench/v1/result.pb.h"
#include "kbench/runner/runner.pb.h"
#include "worker/backend.h"

namespace kbench::worker {

v1::Result MeasureCustomRequest(Backend& backend, const runner::RunnerRequest& request);

}  // namespace kbench::worker
