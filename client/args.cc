// The subcommand flag parser and its help text; see args.h.
#include "client/args.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench::client {
namespace {

const FlagSpec* FindFlag(const CommandSpec& spec, absl::string_view name) {
  for (const auto& f : spec.flags)
    if (f.name == name) return &f;
  return nullptr;
}

// Levenshtein distance, for "did you mean" hints on mistyped flags.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string Suggestion(const CommandSpec& spec, absl::string_view name) {
  const FlagSpec* best = nullptr;
  size_t best_d = 3;  // Only close misspellings are worth suggesting.
  for (const auto& f : spec.flags) {
    size_t d = EditDistance(name, f.name);
    if (d < best_d) best_d = d, best = &f;
  }
  return best ? absl::StrCat(" (did you mean --", best->name, "?)") : "";
}

const std::vector<std::string>& Empty() {
  static const std::vector<std::string> empty;
  return empty;
}

}  // namespace

bool ParsedArgs::Has(absl::string_view name) const { return values_.find(name) != values_.end(); }

std::string ParsedArgs::Get(absl::string_view name, absl::string_view fallback) const {
  auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? std::string(fallback) : it->second.back();
}

const std::vector<std::string>& ParsedArgs::GetAll(absl::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? Empty() : it->second;
}

bool ParsedArgs::GetBool(absl::string_view name) const {
  auto it = values_.find(name);
  return it != values_.end() && !it->second.empty() && it->second.back() == "true";
}

absl::StatusOr<int64_t> ParsedArgs::GetInt(absl::string_view name, int64_t fallback) const {
  if (!Has(name)) return fallback;
  const std::string v = Get(name);
  int64_t out = 0;
  if (!absl::SimpleAtoi(v, &out))
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", v, "' is not an integer"));
  return out;
}

absl::StatusOr<double> ParsedArgs::GetDouble(absl::string_view name, double fallback) const {
  if (!Has(name)) return fallback;
  const std::string v = Get(name);
  double out = 0;
  if (!absl::SimpleAtod(v, &out) || !std::isfinite(out))
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", v, "' is not a number"));
  return out;
}

absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec, const std::vector<std::string>& args) {
  ParsedArgs out;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg == "-" || !absl::StartsWith(arg, "-")) {
      if (spec.positional.empty()) return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "'"));
      out.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--"))
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", arg, "' (flags are spelled --name)"));
    absl::string_view body = absl::string_view(arg).substr(2);
    std::string name(body), value;
    bool has_inline_value = false;
    if (size_t eq = body.find('='); eq != absl::string_view::npos) {
      name = std::string(body.substr(0, eq));
      value = std::string(body.substr(eq + 1));
      has_inline_value = true;
    }
    const FlagSpec* flag = FindFlag(spec, name);
    if (flag == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, Suggestion(spec, name)));
    if (flag->value_name.empty()) {
      // A boolean: --wait, or explicitly --wait=true / --wait=false.
      if (has_inline_value) {
        std::string v = absl::AsciiStrToLower(value);
        if (v != "true" && v != "false" && v != "1" && v != "0")
          return absl::InvalidArgumentError(absl::StrCat("--", name, ": expected true or false, got '", value, "'"));
        value = (v == "true" || v == "1") ? "true" : "false";
      } else {
        value = "true";
      }
    } else if (!has_inline_value) {
      if (i + 1 >= args.size())
        return absl::InvalidArgumentError(absl::StrCat("--", name, ": missing value ", flag->value_name));
      value = args[++i];
    }
    if (!flag->repeatable && !flag->comma_list && !flag->value_name.empty() && out.Has(name))
      return absl::InvalidArgumentError(absl::StrCat("--", name, ": given more than once"));
    if (flag->comma_list) {
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        part = absl::StripAsciiWhitespace(part);
        if (part.empty()) return absl::InvalidArgumentError(absl::StrCat("--", name, ": empty item in '", value, "'"));
        out.Add(name, std::string(part));
      }
    } else {
      out.Add(name, value);
    }
  }
  return out;
}

std::string Usage(absl::string_view program, const CommandSpec& spec) {
  std::string s = absl::StrCat("Usage: ", program, " ", spec.name, spec.flags.empty() ? "" : " [flags]",
                               spec.positional.empty() ? "" : " ", spec.positional, "\n\n", spec.summary, "\n");
  if (!spec.flags.empty()) {
    absl::StrAppend(&s, "\nFlags:\n");
    std::vector<std::string> lefts;
    size_t width = 0;
    for (const auto& f : spec.flags) {
      std::string left = absl::StrCat("  --", f.name, f.value_name.empty() ? "" : " ", f.value_name);
      width = std::max(width, left.size());
      lefts.push_back(std::move(left));
    }
    width = std::min<size_t>(width, 30);
    for (size_t i = 0; i < spec.flags.size(); ++i) {
      const auto& f = spec.flags[i];
      std::string help = f.help;
      if (f.comma_list)
        absl::StrAppend(&help, " (repeatable, or comma-separated)");
      else if (f.repeatable)
        absl::StrAppend(&help, " (repeatable)");
      if (lefts[i].size() > width)
        absl::StrAppend(&s, lefts[i], "\n", std::string(width + 2, ' '), help, "\n");
      else
        absl::StrAppend(&s, lefts[i], std::string(width + 2 - lefts[i].size(), ' '), help, "\n");
    }
    const std::string help_left = "  -h, --help";
    absl::StrAppend(&s, help_left, std::string(width + 2 - std::min(width, help_left.size()), ' '), "Show this help\n");
  }
  if (!spec.details.empty()) absl::StrAppend(&s, "\n", spec.details, "\n");
  if (!spec.examples.empty()) {
    absl::StrAppend(&s, "\nExamples:\n");
    for (const auto& e : spec.examples) absl::StrAppend(&s, "  ", e, "\n");
  }
  return s;
}

}  // namespace kbench::client
