// Registers, shared memory, local memory (spills) and theoretical occupancy of the kernels a CUDA
// variant launches, from the CUDA runtime. Occupancy counts the launch's dynamic shared memory, with the
// function opted in to it as its launcher does (so it is right before the first launch too).
#pragma once

#include <vector>

#include "core/op.h"
#include "kbench/v1/result.pb.h"

namespace kbench::worker {

std::vector<v1::KernelResources> KernelResourcesOf(const std::vector<kernels::LaunchInfo>& launches, int device);

}  // namespace kbench::worker
