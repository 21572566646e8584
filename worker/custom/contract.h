// The launch contract of custom kernels (kbench/v1/custom.proto): for each op that takes them, the
// kernel's entry name, its parameters (the op's tensors in the op's order, then its dims as int64),
// the default block and grid, the rules, and a compilable starting template. Generated from the OpDef
// so it cannot drift from what the harness allocates and checks.
#pragma once

#include <optional>
#include <string>

#include "core/op.h"
#include "kbench/v1/custom.pb.h"

namespace kbench::worker {

// The contract of `op`; nullopt for ops that take no custom kernels (no launch rule is known for them).
std::optional<v1::LaunchContract> MakeLaunchContract(const kernels::OpDef& op);

// The header NVRTC pre-includes in every custom compile (kbench_t, kbench_to_float, kbench_from_float),
// for the dtype's KBENCH_DTYPE_* macro. Its name in #include and --pre-include is kContractHeaderName.
inline constexpr char kContractHeaderName[] = "kbench_contract.h";
const std::string& ContractHeader();

// C++ appended to a custom CUDA source: static_asserts that the entry's parameters have the contract's
// count, pointee sizes and 64-bit dims, with messages that quote the contract's signature.
std::string ContractCheckSource(const v1::LaunchContract& contract, const std::string& entry);

// "void kbench_rmsnorm(const kbench_t* x, const kbench_t* weight, kbench_t* out, long long rows, long long cols)"
std::string ContractSignature(const v1::LaunchContract& contract, const std::string& entry);

}  // namespace kbench::worker
