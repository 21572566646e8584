// Fuzz target: the PTX signature parser (worker/custom/ptx_signature.cc), which reads PTX sent by a
// job (Triton's output, hand-written PTX) before anything is launched. The input is the PTX text:
// every .entry found is read and checked against a launch contract (rmsnorm's: three pointers and two
// int64 dims). Never a crash or a signed overflow (UBSan); an entry PtxEntries lists is always found,
// and every parameter read has a positive size.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kbench/v1/custom.pb.h"
#include "tests/fuzz/fuzz_check.h"
#include "worker/custom/ptx_signature.h"

namespace {

const kbench::v1::LaunchContract& Contract() {
  static const kbench::v1::LaunchContract c = [] {
    kbench::v1::LaunchContract c;
    c.set_entry("kbench_rmsnorm");
    for (const char* name : {"x", "weight", "out", "rows", "cols"}) {
      kbench::v1::ContractParam* p = c.add_params();
      p->set_name(name);
      p->set_size_bytes(8);
      p->set_c_type(name[0] == 'r' || name[0] == 'c' ? "long long" : "float*");
    }
    return c;
  }();
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string ptx(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> entries = kbench::worker::PtxEntries(ptx);
  for (size_t i = 0; i < entries.size() && i < 8; ++i) {
    auto params = kbench::worker::PtxEntryParams(ptx, entries[i]);
    FUZZ_CHECK(params.ok() || absl::IsInvalidArgument(params.status()));
    if (!params.ok()) continue;
    std::vector<int> sizes;
    for (const auto& p : *params) {
      FUZZ_CHECK(p.size_bytes > 0);
      FUZZ_CHECK(!p.name.empty() && !p.type.empty());
      sizes.push_back(p.size_bytes);
    }
    absl::Status s = kbench::worker::CheckParamSizes(sizes, Contract(), entries[i]);
    FUZZ_CHECK(s.ok() || absl::IsInvalidArgument(s));
  }
  // A name that is not among the entries is NOT_FOUND.
  const std::string absent = "kbench_absent";
  if (std::find(entries.begin(), entries.end(), absent) == entries.end())
    FUZZ_CHECK(absl::IsNotFound(kbench::worker::PtxEntryParams(ptx, absent).status()));
  return 0;
}
