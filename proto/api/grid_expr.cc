#include "api/grid_expr.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/quote.h"

namespace kbench::api {

// Recursive descent over the text, building GridExpr's node list.
class GridExprParser {
 public:
  GridExprParser(absl::string_view text, GridExpr* out) : text_(text), out_(out) {}

  absl::Status Run() {
    absl::StatusOr<int> root = Expr(0);
    if (!root.ok()) return root.status();
    SkipSpace();
    if (pos_ != text_.size()) return Error(absl::StrCat("unexpected '", text_.substr(pos_, 1), "'"));
    out_->root_ = *root;
    return absl::OkStatus();
  }

 private:
  static constexpr int kMaxDepth = 32;

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(Quote(text_), " at ", pos_ + 1, ": ", what));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  int Add(GridExpr::Node n) {
    out_->nodes_.push_back(std::move(n));
    return static_cast<int>(out_->nodes_.size()) - 1;
  }

  absl::StatusOr<int> Expr(int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    absl::StatusOr<int> lhs = Term(depth);
    if (!lhs.ok()) return lhs;
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || (text_[pos_] != '+' && text_[pos_] != '-')) return lhs;
      const char op = text_[pos_++];
      absl::StatusOr<int> rhs = Term(depth);
      if (!rhs.ok()) return rhs;
      lhs = Add({.op = op, .lhs = *lhs, .rhs = *rhs});
    }
  }

  absl::StatusOr<int> Term(int depth) {
    absl::StatusOr<int> lhs = Factor(depth);
    if (!lhs.ok()) return lhs;
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || (text_[pos_] != '*' && text_[pos_] != '/' && text_[pos_] != '%')) return lhs;
      const char op = text_[pos_++];
      absl::StatusOr<int> rhs = Factor(depth);
      if (!rhs.ok()) return rhs;
      lhs = Add({.op = op, .lhs = *lhs, .rhs = *rhs});
    }
  }

  absl::StatusOr<int> Factor(int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a number, a name or '('");
    const char c = text_[pos_];
    if (c == '-') {
      ++pos_;
      absl::StatusOr<int> inner = Factor(depth + 1);
      if (!inner.ok()) return inner;
      return Add({.op = 'u', .lhs = *inner});
    }
    if (c == '(') {
      ++pos_;
      absl::StatusOr<int> inner = Expr(depth + 1);
      if (!inner.ok()) return inner;
      if (!Consume(')')) return Error("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v))
          return Error("number too large");
        ++pos_;
      }
      return Add({.op = 'n', .value = v});
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      if (!Consume('(')) return Add({.op = 'v', .name = std::move(name)});
      char op = 0;
      if (name == "cdiv") op = 'c';
      else if (name == "min") op = 'm';
      else if (name == "max") op = 'M';
      else return Error(absl::StrCat("unknown function ", Quote(name), " (known: cdiv, min, max)"));
      absl::StatusOr<int> a = Expr(depth + 1);
      if (!a.ok()) return a;
      if (!Consume(',')) return Error(absl::StrCat("expected ',': ", name, " takes two arguments"));
      absl::StatusOr<int> b = Expr(depth + 1);
      if (!b.ok()) return b;
      if (!Consume(')')) return Error("expected ')'");
      return Add({.op = op, .lhs = *a, .rhs = *b});
    }
    return Error(absl::StrCat("unexpected '", std::string(1, c), "'"));
  }

  absl::string_view text_;
  GridExpr* out_;
  size_t pos_ = 0;
};

absl::StatusOr<GridExpr> GridExpr::Parse(absl::string_view text) {
  if (text.size() > kMaxGridExprBytes)
    return absl::InvalidArgumentError(absl::StrCat("longer than ", kMaxGridExprBytes, " characters"));
  GridExpr e;
  e.text_ = std::string(absl::StripAsciiWhitespace(text));
  if (e.text_.empty()) return absl::InvalidArgumentError("empty expression");
  GridExprParser parser(e.text_, &e);
  if (absl::Status s = parser.Run(); !s.ok()) return s;
  return e;
}

std::vector<std::string> GridExpr::Names() const {
  std::set<std::string> names;
  for (const Node& n : nodes_)
    if (n.op == 'v') names.insert(n.name);
  return {names.begin(), names.end()};
}

absl::StatusOr<int64_t> GridExpr::Evaluate(
    const std::function<std::optional<int64_t>(absl::string_view)>& lookup) const {
  absl::StatusOr<int64_t> v = Eval(root_, lookup);
  if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(Quote(text_), ": ", v.status().message()));
  return v;
}

absl::StatusOr<int64_t> GridExpr::Eval(int index,
                                       const std::function<std::optional<int64_t>(absl::string_view)>& lookup) const {
  const Node& n = nodes_[index];
  if (n.op == 'n') return n.value;
  if (n.op == 'v') {
    std::optional<int64_t> v = lookup(n.name);
    if (!v) return absl::InvalidArgumentError(absl::StrCat("unknown name ", Quote(n.name)));
    return *v;
  }
  absl::StatusOr<int64_t> a = Eval(n.lhs, lookup);
  if (!a.ok()) return a;
  int64_t r = 0;
  const auto overflow = [] { return absl::OutOfRangeError("overflows 64-bit integers"); };
  if (n.op == 'u') {
    if (__builtin_sub_overflow(int64_t{0}, *a, &r)) return overflow();
    return r;
  }
  absl::StatusOr<int64_t> b = Eval(n.rhs, lookup);
  if (!b.ok()) return b;
  switch (n.op) {
    case '+':
      if (__builtin_add_overflow(*a, *b, &r)) return overflow();
      return r;
    case '-':
      if (__builtin_sub_overflow(*a, *b, &r)) return overflow();
      return r;
    case '*':
      if (__builtin_mul_overflow(*a, *b, &r)) return overflow();
      return r;
    case '/':
    case '%':
    case 'c':
      if (*b == 0) return absl::InvalidArgumentError("division by zero");
      if (*a == INT64_MIN && *b == -1) return overflow();
      if (n.op == '/') return *a / *b;
      if (n.op == '%') return *a % *b;
      // Ceiling division, for any signs.
      return *a / *b + ((*a % *b != 0) && ((*a < 0) == (*b < 0)) ? 1 : 0);
    case 'm': return std::min(*a, *b);
    case 'M': return std::max(*a, *b);
  }
  return absl::InternalError("bad expression node");
}

std::vector<std::string> SplitTopLevelCommas(absl::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.emplace_back(absl::StripAsciiWhitespace(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      depth = std::max(0, depth - 1);
    }
  }
  return out;
}

}  // namespace kbench::api
