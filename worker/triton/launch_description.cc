// Reading and evaluating a Triton kernel's launch description; see launch_description.h.
#include "worker/triton/launch_description.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "api/grid_expr.h"
#include "worker/triton/py_literal.h"

namespace kbench::worker {
namespace {

constexpr int kMaxConfigs = 32;

absl::Status Bad(absl::string_view file, int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, "(", line, "): ", kTritonLaunchName, ": ", what));
}

std::optional<kernels::Dtype> DtypeByName(absl::string_view name) {
  for (kernels::Dtype d : {kernels::Dtype::kF32, kernels::Dtype::kBF16, kernels::Dtype::kF16})
    if (kernels::DtypeName(d) == name) return d;
  return std::nullopt;
}

// One config's keys from `d` over `base` (the top level's values are the defaults of "configs").
absl::Status ReadConfig(const PyValue& d, TritonConfig* c, const std::string& where) {
  for (const auto& [key, v] : d.dict) {
    if (key == "num_warps" || key == "num_stages") {
      if (v.kind != PyValue::kInt || v.i < (key == "num_warps" ? 1 : 0) || v.i > 32 ||
          (key == "num_warps" && (v.i & (v.i - 1)) != 0))
        return absl::InvalidArgumentError(absl::StrCat(where, key, " must be ", key == "num_warps" ?
                                                       "a power of two from 1 to 32" : "an integer from 0 to 32"));
      (key == "num_warps" ? c->num_warps : c->num_stages) = static_cast<int>(v.i);
    } else if (key == "constexprs") {
      if (v.kind != PyValue::kDict) return absl::InvalidArgumentError(absl::StrCat(where, "constexprs must be a dict"));
      for (const auto& [name, value] : v.dict) {
        std::string text;
        if (value.kind == PyValue::kInt || value.kind == PyValue::kBool) text = absl::StrCat(value.i);
        else if (value.kind == PyValue::kString) text = value.s;
        else
          return absl::InvalidArgumentError(absl::StrCat(where, "constexpr '", name.substr(0, 32),
                                                         "' must be an int, a bool or an expression string, not a ",
                                                         value.KindName()));
        auto it = std::find_if(c->constexprs.begin(), c->constexprs.end(), [&](const auto& e) { return e.first == name; });
        if (it != c->constexprs.end()) it->second = text;
        else c->constexprs.emplace_back(name, text);
      }
    }
  }
  return absl::OkStatus();
}

using Lookup = std::function<std::optional<int64_t>(absl::string_view)>;

// A grid expression (api/grid_expr.h) in which next_pow2(E) may also appear: each is evaluated
// (innermost first) and replaced by its value before the whole is.
absl::StatusOr<int64_t> Evaluate(std::string text, const Lookup& lookup, int depth = 0) {
  static const std::string kPow2 = "next_pow2(";
  for (size_t at = text.find(kPow2); at != std::string::npos; at = text.find(kPow2)) {
    if (depth > 8) return absl::InvalidArgumentError("next_pow2 nested too deeply");
    size_t end = at + kPow2.size();
    for (int open = 1; end < text.size() && open > 0; ++end) open += text[end] == '(' ? 1 : text[end] == ')' ? -1 : 0;
    if (end > text.size() || text[end - 1] != ')') return absl::InvalidArgumentError("next_pow2( is not closed");
    absl::StatusOr<int64_t> inner = Evaluate(text.substr(at + kPow2.size(), end - 1 - at - kPow2.size()), lookup, depth + 1);
    if (!inner.ok()) return inner.status();
    if (*inner > (int64_t{1} << 40)) return absl::InvalidArgumentError(absl::StrCat("next_pow2 of ", *inner, " is too large"));
    int64_t p = 1;
    while (p < *inner) p <<= 1;
    text.replace(at, end - at, absl::StrCat(p));
  }
  absl::StatusOr<api::GridExpr> e = api::GridExpr::Parse(text);
  if (!e.ok()) return e.status();
  return e->Evaluate(lookup);
}

}  // namespace

std::string TritonConfig::Label(const std::vector<std::pair<std::string, int64_t>>& values) const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : values) parts.push_back(absl::StrCat(name, "=", value));
  parts.push_back(absl::StrCat("num_warps=", num_warps));
  parts.push_back(absl::StrCat("num_stages=", num_stages));
  return absl::StrJoin(parts, " ");
}

absl::StatusOr<TritonLaunch> ParseTritonLaunch(absl::string_view source, absl::string_view file_name) {
  // The assignment at the start of a line (module level).
  size_t at = absl::string_view::npos;
  for (size_t p = 0; p < source.size();) {
    if (absl::StartsWith(source.substr(p), kTritonLaunchName)) {
      absl::string_view rest = source.substr(p + sizeof(kTritonLaunchName) - 1);
      const size_t skipped = rest.size() - absl::StripLeadingAsciiWhitespace(rest).size();
      if (rest.size() > skipped && rest[skipped] == '=') {
        at = p + sizeof(kTritonLaunchName) - 1 + skipped + 1;
        break;
      }
    }
    const size_t nl = source.find('\n', p);
    if (nl == absl::string_view::npos) break;
    p = nl + 1;
  }
  if (at == absl::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": no launch description: add a module-level `",
                                                   kTritonLaunchName, " = {\"grid\": [...], ...}` (kbench-client kernels "
                                                   "--op OP --template --lang triton shows one)"));
  const int line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + at, '\n'));
  absl::StatusOr<PyValue> v = ParsePyLiteral(source.substr(at), nullptr, line);
  if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", kTritonLaunchName, ": ", v.status().message()));
  if (v->kind != PyValue::kDict) return Bad(file_name, line, "must be a dict");
  TritonLaunch launch;
  static const char* kKeys[] = {"kernel", "grid", "constexprs", "num_warps", "num_stages", "configs", "dtypes", "dims",
                                "do_not_specialize"};
  for (const auto& [key, value] : v->dict)
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      return Bad(file_name, line, absl::StrCat("unknown key '", key.substr(0, 32), "' (known: ",
                                               absl::StrJoin(kKeys, ", "), ")"));
  if (const PyValue* k = v->Get("kernel")) {
    if (k->kind != PyValue::kString || k->s.empty() || k->s.size() > 255) return Bad(file_name, line, "kernel must be a name");
    launch.kernel = k->s;
  }
  const PyValue* grid = v->Get("grid");
  if (grid == nullptr || grid->kind != PyValue::kList || grid->items.empty() || grid->items.size() > 3)
    return Bad(file_name, line, "grid must be a list of 1 to 3 expressions, e.g. [\"cdiv(N, BLOCK)\"]");
  for (const PyValue& g : grid->items) {
    std::string text = g.kind == PyValue::kInt ? absl::StrCat(g.i) : g.s;
    if (g.kind != PyValue::kInt && g.kind != PyValue::kString) return Bad(file_name, line, "grid entries must be strings or ints");
    if (absl::StatusOr<api::GridExpr> e = api::GridExpr::Parse(text); !e.ok() && !absl::StrContains(text, "next_pow2("))
      return Bad(file_name, line, absl::StrCat("grid: ", e.status().message()));
    launch.grid.push_back(std::move(text));
  }
  TritonConfig base;
  if (absl::Status s = ReadConfig(*v, &base, ""); !s.ok()) return Bad(file_name, line, s.message());
  if (const PyValue* configs = v->Get("configs")) {
    if (configs->kind != PyValue::kList || configs->items.empty() || configs->items.size() > kMaxConfigs)
      return Bad(file_name, line, absl::StrCat("configs must be a list of 1 to ", kMaxConfigs, " dicts"));
    for (size_t i = 0; i < configs->items.size(); ++i) {
      const PyValue& c = configs->items[i];
      if (c.kind != PyValue::kDict) return Bad(file_name, line, absl::StrCat("configs[", i, "] must be a dict"));
      TritonConfig config = base;
      if (absl::Status s = ReadConfig(c, &config, absl::StrCat("configs[", i, "]: ")); !s.ok())
        return Bad(file_name, line, s.message());
      launch.configs.push_back(std::move(config));
    }
  } else {
    launch.configs.push_back(std::move(base));
  }
  if (const PyValue* dtypes = v->Get("dtypes")) {
    if (dtypes->kind != PyValue::kList) return Bad(file_name, line, "dtypes must be a list such as [\"bf16\", \"f32\"]");
    for (const PyValue& d : dtypes->items) {
      std::optional<kernels::Dtype> dt = d.kind == PyValue::kString ? DtypeByName(d.s) : std::nullopt;
      if (!dt) return Bad(file_name, line, "dtypes: each must be \"f32\", \"bf16\" or \"f16\"");
      launch.dtypes.push_back(*dt);
    }
  }
  if (const PyValue* dims = v->Get("dims")) {
    if (dims->kind != PyValue::kDict) return Bad(file_name, line, "dims must be a dict such as {\"d\": [64, 128]}");
    for (const auto& [dim, values] : dims->dict) {
      const bool ints = values.kind == PyValue::kList && !values.items.empty() &&
                        std::all_of(values.items.begin(), values.items.end(),
                                    [](const PyValue& i) { return i.kind == PyValue::kInt; });
      if (!ints) return Bad(file_name, line, absl::StrCat("dims: '", dim.substr(0, 32), "' must map to a list of ints"));
      std::vector<int64_t> allowed;
      for (const PyValue& value : values.items) allowed.push_back(value.i);
      launch.dim_values.emplace_back(dim, std::move(allowed));
    }
  }
  if (const PyValue* names = v->Get("do_not_specialize")) {
    const bool strings = names->kind == PyValue::kList &&
                         std::all_of(names->items.begin(), names->items.end(),
                                     [](const PyValue& n) { return n.kind == PyValue::kString && !n.s.empty(); });
    if (!strings) return Bad(file_name, line, "do_not_specialize must be a list of dim names such as [\"N\"]");
    for (const PyValue& n : names->items) launch.do_not_specialize.push_back(n.s);
  }
  return launch;
}

std::string UnimplementedDims(const TritonLaunch& launch, const kernels::Problem& problem) {
  for (const auto& [dim, allowed] : launch.dim_values) {
    const int64_t value = problem.dim(dim);
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
      return absl::StrCat(dim, " = ", value, " (implemented: ", absl::StrJoin(allowed, ", "), ")");
  }
  return "";
}

absl::StatusOr<ResolvedTritonLaunch> ResolveTritonLaunch(const TritonLaunch& launch, const TritonConfig& config,
                                                         const kernels::Problem& problem,
                                                         const std::vector<std::string>& flags) {
  ResolvedTritonLaunch r;
  r.num_warps = config.num_warps;
  r.num_stages = config.num_stages;
  auto lookup = [&](absl::string_view name) -> std::optional<int64_t> {
    for (const auto& [dim, value] : problem.dims)
      if (dim == name) return value;
    for (const auto& [c, value] : r.constexprs)
      if (c == name) return value;
    for (const std::string& flag : flags)
      if (flag == name) return int64_t{problem.has_flag(flag) ? 1 : 0};
    return std::nullopt;
  };
  for (const auto& [name, text] : config.constexprs) {
    absl::StatusOr<int64_t> v = Evaluate(text, lookup);
    if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("constexpr ", name, " = ", text.substr(0, 64), ": ", v.status().message()));
    r.constexprs.emplace_back(name, *v);
  }
  static constexpr int64_t kLimits[] = {(int64_t{1} << 31) - 1, 65535, 65535};
  for (size_t i = 0; i < launch.grid.size() && i < 3; ++i) {
    absl::StatusOr<int64_t> v = Evaluate(launch.grid[i], lookup);
    if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("grid[", i, "]: ", v.status().message()));
    if (*v < 0 || *v > kLimits[i])
      return absl::InvalidArgumentError(absl::StrCat("grid[", i, "] = ", launch.grid[i].substr(0, 64), " is ", *v, " for ",
                                                     problem.label(), "; CUDA allows 0 (no launch) to ", kLimits[i]));
    r.grid[i] = *v;
  }
  return r;
}

}  // namespace kbench::worker
