// Fuzz target: shape strings typed by users (proto/api/shape.cc), "M=4096,N=4096" or "8192x4096",
// either with flags after the dims ("8192x4096,causal"). Any bytes must give a problem or an error,
// never a crash; a parsed shape must read back the same from its own label (named: "M=1,N=2";
// positional: ShapeLabel's "1x2"; then ",flag" for each flag).
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "api/shape.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kbench::v1::Problem> p = kbench::api::ParseShape(text);
  if (!p.ok()) {
    FUZZ_CHECK(!p.status().message().empty());
    return 0;
  }
  FUZZ_CHECK(p->dims_size() > 0);
  const bool named = !p->dims(0).name().empty();
  std::string label;
  if (named) {
    label = absl::StrJoin(p->dims(), ",", [](std::string* out, const kbench::v1::Dim& d) {
      absl::StrAppend(out, d.name(), "=", d.value());
    });
    for (const std::string& f : p->flags()) absl::StrAppend(&label, ",", f);
  } else {
    label = kbench::api::ShapeArgument(*p);
  }
  absl::StatusOr<kbench::v1::Problem> again = kbench::api::ParseShape(label);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->SerializeAsString() == p->SerializeAsString());
  (void)kbench::api::ProblemLabel(*p);
  return 0;
}
