// Launch-grid expressions of custom kernels (kbench/v1/custom.proto): integer arithmetic over an op's
// dims and the block size, e.g. "cdiv(N, block_x)" or "rows". Parsed where a job is validated (so a bad
// expression is refused at submit) and evaluated in the runner for each problem.
//
// Grammar: expr := term (('+' | '-') term)*;  term := factor (('*' | '/' | '%') factor)*;
//          factor := INTEGER | NAME | NAME '(' expr ',' expr ')' | '(' expr ')' | '-' factor.
// Functions: cdiv(a, b) (ceiling division), min(a, b), max(a, b). Arithmetic is int64 and checked:
// overflow and division by zero are errors, never wrapped values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/limits.h"  // kMaxGridExprBytes

namespace kbench::api {

class GridExpr {
 public:
  // INVALID_ARGUMENT with the position of the first error ("at 7: expected ')'").
  static absl::StatusOr<GridExpr> Parse(absl::string_view text);

  // The names the expression reads, sorted, without duplicates (function names excluded).
  std::vector<std::string> Names() const;
  // The value with `lookup` giving each name's value (nullopt: unknown name, an error).
  absl::StatusOr<int64_t> Evaluate(const std::function<std::optional<int64_t>(absl::string_view)>& lookup) const;
  const std::string& text() const { return text_; }

 private:
  struct Node {
    char op = 0;         // 'n' number, 'v' name, '+', '-', '*', '/', '%', 'c' cdiv, 'm' min, 'M' max, 'u' negate
    int64_t value = 0;
    std::string name;
    int lhs = -1, rhs = -1;
  };
  friend class GridExprParser;
  absl::StatusOr<int64_t> Eval(int node, const std::function<std::optional<int64_t>(absl::string_view)>& lookup) const;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

// Splits "cdiv(N, 256), 1" on the commas outside parentheses: {"cdiv(N, 256)", "1"} (trimmed).
std::vector<std::string> SplitTopLevelCommas(absl::string_view text);

}  // namespace kbench::api
