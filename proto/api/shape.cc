#include "api/shape.h"

#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench::api {
namespace {

absl::StatusOr<int64_t> ParseDimValue(absl::string_view text, absl::string_view whole) {
  int64_t v = 0;
  text = absl::StripAsciiWhitespace(text);
  if (text.empty() || !absl::SimpleAtoi(text, &v)) {
    return absl::InvalidArgumentError(absl::StrCat("malformed shape '", whole, "': '", text,
                                                   "' is not an integer (or it overflows 64 bits)"));
  }
  return v;
}

bool IsName(absl::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

absl::StatusOr<v1::Problem> ParseShape(absl::string_view text) {
  v1::Problem p;
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return absl::InvalidArgumentError("malformed shape '': empty");
  const auto malformed = [&](absl::string_view part, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("malformed shape '", text, "': ", what, ", got '", part, "'"));
  };
  bool positional = false;
  int item = 0;
  for (absl::string_view raw : absl::StrSplit(t, ',')) {
    const absl::string_view part = absl::StripAsciiWhitespace(raw);
    const bool first = item++ == 0;
    if (part.find('=') != absl::string_view::npos) {  // a named dim
      std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
      const absl::string_view name = absl::StripAsciiWhitespace(kv[0]);
      if (positional || !IsName(name))
        return malformed(part, "expected NAME=VALUE[,NAME=VALUE...] or AxBxC, then optional flags");
      for (const auto& d : p.dims())
        if (d.name() == name)
          return absl::InvalidArgumentError(absl::StrCat("malformed shape '", text, "': dim '", name, "' given twice"));
      auto v = ParseDimValue(kv[1], text);
      if (!v.ok()) return v.status();
      v1::Dim* d = p.add_dims();
      d->set_name(std::string(name));
      d->set_value(*v);
    } else if (!first && IsName(part)) {  // a flag of the op ("causal", "gptj")
      for (const auto& f : p.flags())
        if (f == part)
          return absl::InvalidArgumentError(absl::StrCat("malformed shape '", text, "': flag '", part, "' given twice"));
      p.add_flags(std::string(part));
    } else if (first) {  // positional dims
      positional = true;
      for (absl::string_view dim : absl::StrSplit(part, absl::ByAnyChar("xX*"))) {
        auto v = ParseDimValue(dim, text);
        if (!v.ok()) return v.status();
        p.add_dims()->set_value(*v);
      }
    } else {
      return malformed(part, "expected NAME=VALUE, a flag NAME or, first, AxBxC");
    }
  }
  return p;
}

absl::StatusOr<std::vector<v1::Problem>> ParseShapeList(absl::string_view text) {
  std::vector<v1::Problem> out;
  for (absl::string_view part : absl::StrSplit(text, ';')) {
    if (absl::StripAsciiWhitespace(part).empty()) continue;
    absl::StatusOr<v1::Problem> p = ParseShape(part);
    if (!p.ok()) return p.status();
    out.push_back(*std::move(p));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat("no shape in '", text.substr(0, 40), "'"));
  return out;
}

}  // namespace kbench::api
