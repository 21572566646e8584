// Fuzz target: launch-grid expressions of custom kernels (proto/api/grid_expr.cc), as a job's
// custom_variants[].grid gives them: "cdiv(N, block_x), 1". Each comma-separated part is parsed and,
// when it parses, evaluated with names bound to ordinary and extreme values (0, -1, INT64_MIN/MAX), so
// that overflow and division by zero must come back as errors. Never a crash, never a signed overflow
// (UBSan), and a parsed expression parses again from its own text with the same names.
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "api/grid_expr.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr int64_t kValues[] = {1, 256, 4096, 0, -1, 3, INT64_MAX, INT64_MIN, 1 << 20, 7};

// A name's value: a function of its spelling, so that the same input always evaluates alike.
std::optional<int64_t> Lookup(absl::string_view name) {
  if (name == "unknown") return std::nullopt;
  size_t h = 0;
  for (char c : name) h = h * 31 + static_cast<unsigned char>(c);
  return kValues[h % (sizeof(kValues) / sizeof(kValues[0]))];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const std::string& part : kbench::api::SplitTopLevelCommas(text)) {
    absl::StatusOr<kbench::api::GridExpr> e = kbench::api::GridExpr::Parse(part);
    if (!e.ok()) {
      FUZZ_CHECK(!e.status().message().empty());
      continue;
    }
    absl::StatusOr<kbench::api::GridExpr> again = kbench::api::GridExpr::Parse(e->text());
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->Names() == e->Names());
    absl::StatusOr<int64_t> v = e->Evaluate(Lookup);
    absl::StatusOr<int64_t> v2 = again->Evaluate(Lookup);
    FUZZ_CHECK(v.ok() == v2.ok());
    if (v.ok()) FUZZ_CHECK(*v == *v2);
  }
  return 0;
}
