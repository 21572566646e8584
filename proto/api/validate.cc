#include "api/validate.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/bounds.h"
#include "api/custom_spec.h"
#include "api/grid_expr.h"
#include "api/message_bounds.h"
#include "api/names.h"
#include "api/plugin_spec.h"
#include "api/quote.h"

namespace kbench::api {
namespace {

// The catalog's names, for "(known: ...)": they come from workers, so the list is cut too.
template <typename T>
std::string NamesOf(const T& items) {
  return CutText(absl::StrJoin(items, ", ", [](std::string* out, const auto& x) { out->append(x.name()); }), 1024);
}

std::vector<v1::Dtype> DtypesFor(const v1::OpInfo& op, const v1::JobSpec& spec) {
  std::vector<v1::Dtype> out;
  const auto& src = spec.dtypes().empty() ? op.dtypes() : spec.dtypes();
  for (int d : src) out.push_back(static_cast<v1::Dtype>(d));
  return out;
}

std::string KnownDtypes(const v1::OpInfo& op) {
  return absl::StrJoin(op.dtypes(), ", ", [](std::string* o, int d) { o->append(DtypeName(static_cast<v1::Dtype>(d))); });
}

// Whether the op takes 0 for this dim (OpInfo.zero_dims); every other dim is >= 1.
bool MayBeZero(const v1::OpInfo& op, absl::string_view dim) {
  return std::find(op.zero_dims().begin(), op.zero_dims().end(), dim) != op.zero_dims().end();
}

const v1::DerivedDim* FindDerived(const v1::OpInfo& op, absl::string_view dim) {
  for (const v1::DerivedDim& d : op.derived_dims())
    if (d.name() == dim) return &d;
  return nullptr;
}

// A shape's dim values in the op's order. A named shape gives every dim that is not derived, in any
// order, and may give derived ones; a positional one gives every dim, or exactly the non-derived ones,
// in the op's order. A derived dim left out takes its expression's value over the others.
absl::StatusOr<std::vector<int64_t>> ShapeValues(const v1::OpInfo& op, const v1::Problem& shape,
                                                 const std::string& field) {
  const int n = op.dims_size();
  const std::string all = absl::StrJoin(op.dims(), ",");
  std::vector<std::string> given_names;  // The dims a shape must give.
  for (const std::string& dn : op.dims())
    if (FindDerived(op, dn) == nullptr) given_names.push_back(dn);
  const bool has_derived = static_cast<int>(given_names.size()) < n;
  std::vector<std::optional<int64_t>> values(static_cast<size_t>(n));
  if (shape.dims().empty()) return Invalid(field, "no dimensions");
  if (!shape.dims(0).name().empty()) {
    for (int i = 0; i < shape.dims_size(); ++i) {
      const std::string& name = shape.dims(i).name();
      const auto it = std::find(op.dims().begin(), op.dims().end(), name);
      const std::string df = absl::StrCat(field, ".dims[", i, "]");
      if (it == op.dims().end())
        return Invalid(df, absl::StrCat("unknown dimension ", Quote(name), " (op '", op.name(), "' has ", all, ")"));
      std::optional<int64_t>& slot = values[static_cast<size_t>(it - op.dims().begin())];
      if (slot) return Invalid(df, absl::StrCat("dimension ", Quote(name), " given twice"));
      slot = shape.dims(i).value();
    }
    for (int j = 0; j < n; ++j)
      if (!values[static_cast<size_t>(j)] && FindDerived(op, op.dims(j)) == nullptr)
        return Invalid(field, absl::StrCat("missing dimension '", op.dims(j), "' (op '", op.name(), "' has ", all, ")"));
  } else if (shape.dims_size() == n) {
    for (int j = 0; j < n; ++j) values[static_cast<size_t>(j)] = shape.dims(j).value();
  } else if (has_derived && shape.dims_size() == static_cast<int>(given_names.size())) {
    for (int j = 0, i = 0; j < n; ++j)
      if (FindDerived(op, op.dims(j)) == nullptr) values[static_cast<size_t>(j)] = shape.dims(i++).value();
  } else {
    return Invalid(field, absl::StrCat("op '", op.name(), "' has ", n, " dimensions (", all, ")",
                                       has_derived ? absl::StrCat(", or ", given_names.size(), " without the ones it derives (",
                                                                  absl::StrJoin(given_names, ","), ")")
                                                   : "",
                                       ", got ", shape.dims_size()));
  }
  for (int j = 0; j < n; ++j) {
    if (values[static_cast<size_t>(j)]) continue;
    const v1::DerivedDim& d = *FindDerived(op, op.dims(j));
    const std::string what = absl::StrCat("derived dimension ", Quote(d.name()), " = ", Escape(d.expr()));
    absl::StatusOr<GridExpr> expr = GridExpr::Parse(d.expr());
    if (!expr.ok())  // the worker's catalog, not the request, is wrong
      return Invalid(field, absl::StrCat("op '", op.name(), "': ", what, ": ", expr.status().message()));
    absl::StatusOr<int64_t> v = expr->Evaluate([&](absl::string_view name) -> std::optional<int64_t> {
      for (int k = 0; k < n; ++k)
        if (op.dims(k) == name && FindDerived(op, name) == nullptr) return values[static_cast<size_t>(k)];
      return std::nullopt;  // only the dims a shape gives
    });
    if (!v.ok())  // the message quotes the expression
      return Invalid(field, absl::StrCat("derived dimension ", Quote(d.name()), ": ", v.status().message(),
                                         " (give it explicitly)"));
    const bool zero_ok = MayBeZero(op, d.name());
    if (*v < (zero_ok ? 0 : 1))
      return Invalid(field, absl::StrCat(what, " is ", *v, ", must be >= ", zero_ok ? 0 : 1, " (give it explicitly)"));
    values[static_cast<size_t>(j)] = *v;
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  for (const std::optional<int64_t>& v : values) out.push_back(*v);
  return out;
}

}  // namespace

int64_t DtypeBytes(v1::Dtype d) {
  switch (d) {
    case v1::DTYPE_F32:
    case v1::DTYPE_TF32: return 4;
    case v1::DTYPE_BF16:
    case v1::DTYPE_F16: return 2;
    case v1::DTYPE_FP8_E4M3:
    case v1::DTYPE_U8: return 1;
    case v1::DTYPE_I32: return 4;
    default: return 0;
  }
}

absl::Status ValidateSpecStructure(const v1::JobSpec& spec) {
  if (absl::Status s = CheckSpecBounds(spec); !s.ok()) return s;
  // An A/B job may leave the op open: every op that both sides have.
  if (spec.op().empty() && !spec.has_ab()) return Invalid("spec.op", "required (e.g. rmsnorm)");
  std::set<std::string> seen;
  for (int i = 0; i < spec.variants_size(); ++i) {
    const std::string field = absl::StrCat("spec.variants[", i, "]");
    if (spec.variants(i).empty()) return Invalid(field, "empty variant name");
    if (!seen.insert(spec.variants(i)).second)
      return Invalid(field, absl::StrCat("variant ", Quote(spec.variants(i)), " given twice"));
  }
  for (int i = 0; i < spec.problems_size(); ++i) {
    const auto& ps = spec.problems(i);
    const std::string field = absl::StrCat("spec.problems[", i, "]");
    if (ps.source_case() == v1::ProblemSpec::SOURCE_NOT_SET) return Invalid(field, "neither a preset nor a shape");
    if (ps.has_preset()) {
      if (ps.preset().empty()) return Invalid(field + ".preset", "empty preset name");
      continue;
    }
    const auto& shape = ps.shape();
    if (shape.dims().empty()) return Invalid(field + ".shape", "no dimensions");
    const bool named = !shape.dims(0).name().empty();
    for (int j = 0; j < shape.dims_size(); ++j) {
      const auto& d = shape.dims(j);
      const std::string df = absl::StrCat(field, ".shape.dims[", j, "]", d.name().empty() ? "" : " (" + Escape(d.name()) + ")");
      if (named != !d.name().empty()) return Invalid(df, "mix of named and positional dimensions");
      // 0 only where the op allows it (OpInfo.zero_dims), checked against the catalog.
      if (d.value() < 0) return Invalid(df, absl::StrCat("must be >= 0, got ", d.value()));
    }
  }
  // Each problem runs once per listed dtype: repeated dtypes multiplied the expansion (a 5 KB request
  // took minutes to expand; tests/fuzz/corpus/validate/dup_dtypes_blowup).
  std::set<int> seen_dtypes;
  for (int i = 0; i < spec.dtypes_size(); ++i) {
    if (spec.dtypes(i) == v1::DTYPE_UNSPECIFIED)
      return Invalid(absl::StrCat("spec.dtypes[", i, "]"), "unspecified dtype");
    if (!seen_dtypes.insert(spec.dtypes(i)).second) return Invalid(absl::StrCat("spec.dtypes[", i, "]"), "given twice");
  }
  const auto& s = spec.settings();
  if (s.max_samples() > 0 && s.min_samples() > s.max_samples())
    return Invalid("spec.settings.min_samples", "greater than max_samples");
  if (absl::Status st = ValidateCustomVariants(spec); !st.ok()) return st;
  return ValidatePluginFields(spec);
}

absl::StatusOr<int64_t> FootprintBytes(const v1::OpInfo& op, const v1::Problem& problem) {
  int64_t total = 0;
  for (const auto& t : op.tensors()) {
    int64_t elems = 1;
    for (const auto& dn : t.dims()) {
      auto it = std::find_if(problem.dims().begin(), problem.dims().end(),
                             [&](const v1::Dim& d) { return d.name() == dn; });
      if (it == problem.dims().end())
        return absl::InvalidArgumentError(absl::StrCat("problem lacks dimension '", dn, "'"));
      if (__builtin_mul_overflow(elems, it->value(), &elems))
        return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "' overflows 64-bit element count"));
    }
    const v1::Dtype dt = t.fixed_dtype() != v1::DTYPE_UNSPECIFIED ? t.fixed_dtype() : problem.dtype();
    int64_t bytes = 0;
    if (__builtin_mul_overflow(elems, std::max<int64_t>(DtypeBytes(dt), 1), &bytes) ||
        __builtin_add_overflow(total, bytes, &total))
      return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "' overflows 64-bit byte count"));
  }
  return total;
}

absl::StatusOr<v1::Problem> ResolveShape(const v1::OpInfo& op, const v1::Problem& shape, const std::string& field) {
  absl::StatusOr<std::vector<int64_t>> values = ShapeValues(op, shape, field);
  if (!values.ok()) return values.status();
  v1::Problem ordered = shape;
  ordered.clear_dims();
  for (int j = 0; j < op.dims_size(); ++j) {
    const std::string& dn = op.dims(j);
    const int64_t value = (*values)[j];
    if (value < 1 && !MayBeZero(op, dn))
      return Invalid(absl::StrCat(field, ".dims[", j, "] (", dn, ")"), absl::StrCat("must be >= 1, got ", value));
    if (op.max_dim_value() > 0 && value > op.max_dim_value())
      return Invalid(absl::StrCat(field, ".dims[", j, "] (", dn, ")"),
                     absl::StrCat("must be <= ", op.max_dim_value(), ", got ", value));
    v1::Dim* d = ordered.add_dims();
    d->set_name(dn);
    d->set_value(value);
  }
  if (ordered.dtype() != v1::DTYPE_UNSPECIFIED &&
      std::find(op.dtypes().begin(), op.dtypes().end(), ordered.dtype()) == op.dtypes().end())
    return Invalid(field + ".dtype", absl::StrCat("op '", op.name(), "' does not support dtype ", DtypeName(ordered.dtype()),
                                                  " (supported: ", KnownDtypes(op), ")"));
  for (const auto& f : ordered.flags())
    if (std::find(op.flags().begin(), op.flags().end(), f) == op.flags().end())
      return Invalid(field + ".flags", absl::StrCat("unknown flag ", Quote(f), " of op '", op.name(), "'"));
  return ordered;
}

absl::Status ResolveAgainstOp(const v1::OpInfo& op, int64_t max_memory_bytes, v1::JobSpec* spec) {
  if (absl::Status s = ResolveCustomVariants(op, *spec); !s.ok()) return s;
  for (int i = 0; i < spec->variants_size(); ++i) {
    const auto& name = spec->variants(i);
    if (IsCustomVariantName(name)) continue;  // ResolveCustomVariants checks those
    if (std::none_of(op.variants().begin(), op.variants().end(), [&](const auto& v) { return v.name() == name; }))
      return Invalid(absl::StrCat("spec.variants[", i, "]"), absl::StrCat("unknown variant ", Quote(name), " of op '",
                                                                          op.name(), "' (known: ", NamesOf(op.variants()), ")"));
  }
  auto supported = [&](v1::Dtype d) { return std::find(op.dtypes().begin(), op.dtypes().end(), d) != op.dtypes().end(); };
  const std::string known_dtypes = KnownDtypes(op);
  for (int i = 0; i < spec->dtypes_size(); ++i)
    if (!supported(spec->dtypes(i)))
      return Invalid(absl::StrCat("spec.dtypes[", i, "]"), absl::StrCat("op '", op.name(), "' does not support dtype ",
                                                                        DtypeName(spec->dtypes(i)), " (supported: ", known_dtypes, ")"));
  for (int i = 0; i < spec->problems_size(); ++i) {
    auto* ps = spec->mutable_problems(i);
    const std::string field = absl::StrCat("spec.problems[", i, "]");
    if (ps->has_preset()) {
      if (std::none_of(op.presets().begin(), op.presets().end(), [&](const auto& p) { return p.name() == ps->preset(); }))
        return Invalid(field + ".preset", absl::StrCat("unknown preset ", Quote(ps->preset()), " of op '", op.name(),
                                                       "' (known: ", NamesOf(op.presets()), ")"));
      continue;
    }
    absl::StatusOr<v1::Problem> resolved = ResolveShape(op, ps->shape(), field + ".shape");
    if (!resolved.ok()) return resolved.status();
    *ps->mutable_shape() = *std::move(resolved);
  }
  // Memory: every concrete problem must fit on the largest matching device.
  for (const v1::Problem& p : ExpandProblems(op, *spec)) {
    auto bytes = FootprintBytes(op, p);
    if (!bytes.ok()) return Invalid("spec.problems", absl::StrCat(ProblemLabel(p), ": ", bytes.status().message()));
    if (max_memory_bytes > 0 && *bytes > max_memory_bytes)
      return Invalid("spec.problems", absl::StrCat(ProblemLabel(p), " needs ", *bytes,
                                                   " bytes, more than the largest matching device's ", max_memory_bytes));
  }
  return absl::OkStatus();
}

std::vector<v1::Problem> ExpandProblems(const v1::OpInfo& op, const v1::JobSpec& spec) {
  std::vector<v1::Problem> out;
  const std::vector<v1::Dtype> dtypes = DtypesFor(op, spec);
  auto expand = [&](const v1::Problem& p) {
    if (p.dtype() != v1::DTYPE_UNSPECIFIED) {
      if (spec.dtypes().empty() || std::find(dtypes.begin(), dtypes.end(), p.dtype()) != dtypes.end()) out.push_back(p);
      return;
    }
    for (v1::Dtype d : dtypes) {
      v1::Problem q = p;
      q.set_dtype(d);
      out.push_back(q);
    }
  };
  auto expand_preset = [&](const std::string& name) {
    for (const auto& pr : op.presets())
      if (pr.name() == name)
        for (v1::Problem p : pr.problems()) {
          p.set_preset(name);
          expand(p);
        }
  };
  if (spec.problems().empty()) {
    // No problem named: "small", quick everywhere; an A/B compare (the PR gate) measures real sizes
    // instead, the op's "ci" preset, where a launch-bound toy would hide a bandwidth regression.
    auto has = [&](const char* name) {
      return std::any_of(op.presets().begin(), op.presets().end(), [&](const auto& p) { return p.name() == name; });
    };
    if (spec.has_ab() && has(kCiPreset)) expand_preset(kCiPreset);
    else if (has("small")) expand_preset("small");
    else if (!op.presets().empty()) expand_preset(op.presets(0).name());
  }
  for (const auto& ps : spec.problems()) {
    if (ps.has_preset()) expand_preset(ps.preset());
    else expand(ps.shape());
  }
  return out;
}

std::vector<const v1::VariantInfo*> SelectVariants(const v1::OpInfo& op, const v1::JobSpec& spec) {
  std::vector<const v1::VariantInfo*> out;
  for (const auto& v : op.variants())
    if (spec.variants().empty() ||
        std::find(spec.variants().begin(), spec.variants().end(), v.name()) != spec.variants().end())
      out.push_back(&v);
  return out;
}

}  // namespace kbench::api
