// `kernels --op OP --template --lang triton`: a starting Triton kernel for an op, with its launch
// description (worker/triton/launch_description.h), to save as a .py file and submit with
// `submit --op OP --source FILE.py`. Built from the op's launch contract (the parameters' names and
// order); vector_add, rmsnorm, softmax, layernorm and gemm get a simple, correct kernel, other ops a
// skeleton that refuses to compile until it is written.
#pragma once

#include <string>

#include "kbench/v1/catalog.pb.h"

namespace kbench::client {

std::string TritonTemplate(const v1::OpInfo& op);

}  // namespace kbench::client
