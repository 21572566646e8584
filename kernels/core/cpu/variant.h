// How a CPU variant is declared: f32 and bf16, the CPU backend, and the host-memory limit of limits.h.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "core/op.h"
#include "core/cpu/limits.h"

namespace kbench::kernels::cpu {

using RunFn = std::function<void(const Problem&, std::span<const Tensor>)>;

// A CPU variant for f32 and bf16 that skips per DataLimitSkip(op, more).
Variant MakeCpuVariant(const OpDef& op, std::string name, std::string description, RunFn run, SkipFn more = {});

}  // namespace kbench::kernels::cpu
