// The Python literal reader; see py_literal.h.
#include "worker/triton/py_literal.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kbench::worker {

const PyValue* PyValue::Get(absl::string_view key) const {
  for (const auto& [k, v] : dict)
    if (k == key) return &v;
  return nullptr;
}

std::string PyValue::KindName() const {
  switch (kind) {
    case kNone: return "None";
    case kBool: return "bool";
    case kInt: return "int";
    case kFloat: return "float";
    case kString: return "str";
    case kList: return "list";
    case kDict: return "dict";
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 16;

class Reader {
 public:
  Reader(absl::string_view text, int line) : t_(text), line_(line) {}

  absl::StatusOr<PyValue> Value(int depth) {
    if (depth > kMaxDepth) return Error("literal nested too deeply");
    Skip();
    if (pos_ >= t_.size()) return Error("expected a value, found the end of the file");
    const char c = t_[pos_];
    if (c == '{') return Dict(depth);
    if (c == '[' || c == '(') return List(depth, c == '[' ? ']' : ')');
    if (c == '"' || c == '\'') return String();
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) return Number();
    if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t end = pos_;
      while (end < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[end])) || t_[end] == '_')) ++end;
      const absl::string_view word = t_.substr(pos_, end - pos_);
      PyValue v;
      if (word == "True" || word == "False") {
        v.kind = PyValue::kBool;
        v.i = word == "True";
      } else if (word != "None") {
        return Error(absl::StrCat("expected a literal, found the name '", word.substr(0, 32),
                                  "' (only literals are read: no names, calls or expressions)"));
      }
      pos_ = end;
      return v;
    }
    return Error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  size_t pos() const { return pos_; }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("line ", line_, ": ", what));
  }

  // Blanks, newlines (counted) and comments.
  void Skip() {
    while (pos_ < t_.size()) {
      const char c = t_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < t_.size() && t_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  bool Take(char c) {
    Skip();
    if (pos_ < t_.size() && t_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  absl::StatusOr<PyValue> Dict(int depth) {
    ++pos_;
    PyValue v;
    v.kind = PyValue::kDict;
    while (!Take('}')) {
      absl::StatusOr<PyValue> key = Value(depth + 1);
      if (!key.ok()) return key.status();
      if (key->kind != PyValue::kString) return Error(absl::StrCat("dict keys must be strings, found a ", key->KindName()));
      if (!Take(':')) return Error("expected ':' after a dict key");
      absl::StatusOr<PyValue> value = Value(depth + 1);
      if (!value.ok()) return value.status();
      if (v.Get(key->s) != nullptr) return Error(absl::StrCat("key '", key->s.substr(0, 32), "' appears twice"));
      v.dict.emplace_back(key->s, std::move(*value));
      if (Take('}')) break;
      if (!Take(',')) return Error("expected ',' or '}' in a dict");
    }
    return v;
  }

  absl::StatusOr<PyValue> List(int depth, char close) {
    ++pos_;
    PyValue v;
    v.kind = PyValue::kList;
    while (!Take(close)) {
      absl::StatusOr<PyValue> item = Value(depth + 1);
      if (!item.ok()) return item.status();
      v.items.push_back(std::move(*item));
      if (Take(close)) break;
      if (!Take(',')) return Error(absl::StrCat("expected ',' or '", std::string(1, close), "' in a list"));
    }
    return v;
  }

  absl::StatusOr<PyValue> String() {
    const char quote = t_[pos_++];
    PyValue v;
    v.kind = PyValue::kString;
    while (pos_ < t_.size() && t_[pos_] != quote) {
      char c = t_[pos_++];
      if (c == '\n') return Error("string not closed on its line");
      if (c == '\\' && pos_ < t_.size()) {
        c = t_[pos_++];
        if (c == 'n') c = '\n';
        else if (c == 't') c = '\t';
        else if (c != '\\' && c != '\'' && c != '"') return Error("only \\n, \\t, \\\\ and quotes are read as escapes");
      }
      v.s.push_back(c);
    }
    if (pos_ >= t_.size()) return Error("string not closed");
    ++pos_;
    return v;
  }

  absl::StatusOr<PyValue> Number() {
    size_t end = pos_ + 1;
    while (end < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[end])) || t_[end] == '.' || t_[end] == '_' ||
                               ((t_[end] == '-' || t_[end] == '+') && (t_[end - 1] == 'e' || t_[end - 1] == 'E'))))
      ++end;
    std::string text(t_.substr(pos_, end - pos_));
    std::erase(text, '_');
    PyValue v;
    if (absl::SimpleAtoi(text, &v.i)) {
      v.kind = PyValue::kInt;
    } else if (absl::SimpleAtod(text, &v.f)) {
      v.kind = PyValue::kFloat;
    } else {
      return Error(absl::StrCat("'", text.substr(0, 32), "' is not a number"));
    }
    pos_ = end;
    return v;
  }

  absl::string_view t_;
  size_t pos_ = 0;
  int line_;
};

}  // namespace

absl::StatusOr<PyValue> ParsePyLiteral(absl::string_view text, size_t* consumed, int first_line) {
  Reader r(text, first_line);
  absl::StatusOr<PyValue> v = r.Value(0);
  if (v.ok() && consumed) *consumed = r.pos();
  return v;
}

}  // namespace kbench::worker
