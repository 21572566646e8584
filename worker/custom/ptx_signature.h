// The parameter list of a kernel's .entry in PTX text, and its check against a launch contract. Used
// for PTX sent by a job (Triton's output, hand-written PTX) and for the PTX NVRTC produces, so a kernel
// whose signature does not match is refused before anything is launched. Needs no GPU.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/custom.pb.h"

namespace kbench::worker {

struct PtxParam {
  std::string name;
  std::string type;  // ".u64", ".b8[8]", ...
  int size_bytes = 0;
};

// The .entry names of the PTX module, in order.
std::vector<std::string> PtxEntries(absl::string_view ptx);

// The parameters of `.entry <entry>(...)`. NOT_FOUND naming the entries there are when it is absent;
// INVALID_ARGUMENT when its parameter list cannot be read.
absl::StatusOr<std::vector<PtxParam>> PtxEntryParams(absl::string_view ptx, absl::string_view entry);

// OK when the sizes match the contract's parameters one for one; otherwise INVALID_ARGUMENT that
// names the first difference and quotes the contract's signature.
absl::Status CheckParamSizes(const std::vector<int>& sizes, const v1::LaunchContract& contract,
                             const std::string& entry);

}  // namespace kbench::worker
