#include "api/custom_spec.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/bounds.h"
#include "api/grid_expr.h"
#include "api/names.h"
#include "api/quote.h"

namespace kbench::api {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsNameChar(c) && c != '.' && c != '-'; });
}

}  // namespace

std::string CustomVariantName(const v1::CustomVariant& custom) {
  return absl::StrCat(kCustomVariantPrefix, custom.name());
}

bool IsCustomVariantName(absl::string_view variant) { return absl::StartsWith(variant, kCustomVariantPrefix); }

bool IsAllowedCompileOption(absl::string_view o) {
  // -DNAME or -DNAME=VALUE with a plain macro name; the value may not smuggle another option.
  if (absl::StartsWith(o, "-D") || absl::StartsWith(o, "--define-macro=")) {
    absl::string_view def = o.substr(absl::StartsWith(o, "-D") ? 2 : 15);
    absl::string_view name = def.substr(0, def.find('='));
    return IsIdentifier(name) && !absl::StrContains(def, ' ');
  }
  static constexpr absl::string_view kExact[] = {
      "-use_fast_math", "--use_fast_math", "-lineinfo", "--generate-line-info", "--extra-device-vectorization",
      "-extra-device-vectorization", "--restrict", "-restrict", "--dopt=on", "--dopt=off", "-dopt=on", "-dopt=off"};
  if (std::find(std::begin(kExact), std::end(kExact), o) != std::end(kExact)) return true;
  static constexpr absl::string_view kPrefixes[] = {
      "--maxrregcount=", "-maxrregcount=", "--std=c++", "-std=c++", "--ftz=", "-ftz=", "--prec-sqrt=", "-prec-sqrt=",
      "--prec-div=", "-prec-div=", "--fmad=", "-fmad="};
  for (absl::string_view p : kPrefixes) {
    if (!absl::StartsWith(o, p)) continue;
    absl::string_view v = o.substr(p.size());
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
    });
  }
  return false;
}

absl::Status ValidateCustomVariants(const v1::JobSpec& spec) {
  if (spec.custom_variants_size() > kMaxCustomVariantsPerJob)
    return Invalid("spec.custom_variants", absl::StrCat("at most ", kMaxCustomVariantsPerJob, " custom variants"));
  int64_t total = 0;
  std::set<std::string> names;
  for (int i = 0; i < spec.custom_variants_size(); ++i) {
    const v1::CustomVariant& c = spec.custom_variants(i);
    const std::string f = absl::StrCat("spec.custom_variants[", i, "]");
    if (c.name().empty() || c.name().size() > kMaxCustomNameBytes ||
        !std::all_of(c.name().begin(), c.name().end(), IsNameChar))
      return Invalid(f + ".name", absl::StrCat(Quote(c.name()), " must be 1-", kMaxCustomNameBytes,
                                               " characters of A-Z, a-z, 0-9, '_', '.', '-'"));
    if (!names.insert(c.name()).second) return Invalid(f + ".name", absl::StrCat(Quote(c.name()), " given twice"));
    if (c.source().empty()) return Invalid(f + ".source", "empty");
    if (static_cast<int64_t>(c.source().size()) > kMaxCustomSourceBytes)
      return Invalid(f + ".source", absl::StrCat(c.source().size(), " bytes, more than the limit of ",
                                                 kMaxCustomSourceBytes, " (1 MiB)"));
    total += static_cast<int64_t>(c.source().size());
    if (total > kMaxCustomSourceTotalBytes)
      return Invalid("spec.custom_variants", absl::StrCat("sources total more than ", kMaxCustomSourceTotalBytes,
                                                          " bytes (4 MiB)"));
    if (!v1::CustomSourceKind_IsValid(c.kind()))
      return Invalid(f + ".kind", absl::StrCat("unknown kind ", static_cast<int>(c.kind())));
    const bool is_source = c.kind() == v1::CUDA_SOURCE || c.kind() == v1::CUSTOM_SOURCE_KIND_UNSPECIFIED;
    if (c.file_name().size() > kMaxCustomFileNameBytes || absl::StrContains(c.file_name(), '\n'))
      return Invalid(f + ".file_name", absl::StrCat("at most ", kMaxCustomFileNameBytes, " bytes, on one line"));
    if (absl::Status s = CheckSize(f + ".entry", c.entry(), kMaxCustomFileNameBytes); !s.ok()) return s;
    if (!c.entry().empty() && !IsIdentifier(c.entry()))
      return Invalid(f + ".entry", absl::StrCat(Quote(c.entry()), " is not a kernel name (letters, digits, '_')"));
    if (c.block_size() > 3) return Invalid(f + ".block", "at most 3 values (x, y, z)");
    int64_t threads = 1;
    for (int j = 0; j < c.block_size(); ++j) {
      if (c.block(j) < 1) return Invalid(absl::StrCat(f, ".block[", j, "]"), "must be >= 1");
      threads *= c.block(j);
      if (threads > kMaxBlockThreads)
        return Invalid(f + ".block", absl::StrCat("more than ", kMaxBlockThreads, " threads per block"));
    }
    if (c.grid_size() > 3) return Invalid(f + ".grid", "at most 3 expressions (x, y, z)");
    for (int j = 0; j < c.grid_size(); ++j) {
      if (absl::Status s = CheckSize(At(f + ".grid", j), c.grid(j), kMaxGridExprBytes); !s.ok()) return s;
      if (auto e = GridExpr::Parse(c.grid(j)); !e.ok())
        return Invalid(absl::StrCat(f, ".grid[", j, "]"), e.status().message());
    }
    if (c.dynamic_shared_bytes() < 0 || c.dynamic_shared_bytes() > kMaxDynamicSharedBytes)
      return Invalid(f + ".dynamic_shared_bytes", absl::StrCat("must be in [0, ", kMaxDynamicSharedBytes, "]"));
    // Triton's launch is the file's own description (worker/triton/launch_description.h).
    if (c.kind() == v1::TRITON_SOURCE && (!c.entry().empty() || c.block_size() > 0 || c.grid_size() > 0 ||
                                          c.dynamic_shared_bytes() != 0))
      return Invalid(f + ".kind", "a Triton source takes no entry, block, grid or shared memory: its kbench_launch says how it is launched");
    if (!is_source && !c.compile_options().empty())
      return Invalid(f + ".compile_options", "only for CUDA source (PTX and cubin are not compiled by NVRTC)");
    if (absl::Status s = CheckStrings(f + ".compile_options", c.compile_options(), kMaxCompileOptions,
                                      kMaxCompileOptionBytes, false);
        !s.ok())
      return s;
    for (int j = 0; j < c.compile_options_size(); ++j)
      if (!IsAllowedCompileOption(c.compile_options(j)))
        return Invalid(absl::StrCat(f, ".compile_options[", j, "]"),
                       absl::StrCat(Quote(c.compile_options(j)), " is not allowed (allowed: -DNAME[=VALUE], ",
                                    "-use_fast_math, -lineinfo, --maxrregcount=N, --std=c++NN, --ftz=, ",
                                    "--prec-div=, --prec-sqrt=, --fmad=, --extra-device-vectorization, --restrict, --dopt=)"));
    if (absl::Status s = CheckEnums(f + ".dtypes", c.dtypes(), kMaxDtypesPerJob, v1::Dtype_IsValid, false); !s.ok())
      return s;
    for (int j = 0; j < c.dtypes_size(); ++j)
      if (c.dtypes(j) == v1::DTYPE_UNSPECIFIED) return Invalid(absl::StrCat(f, ".dtypes[", j, "]"), "unspecified dtype");
    if (c.compile_timeout_ns() < 0 || c.compile_timeout_ns() > kMaxCompileTimeoutNs)
      return Invalid(f + ".compile_timeout_ns", absl::StrCat("must be in [0, ", kMaxCompileTimeoutNs, "] (10 min)"));
  }
  return absl::OkStatus();
}

absl::Status ResolveCustomVariants(const v1::OpInfo& op, const v1::JobSpec& spec) {
  for (int i = 0; i < spec.variants_size(); ++i) {
    if (!IsCustomVariantName(spec.variants(i))) continue;
    const bool known = std::any_of(spec.custom_variants().begin(), spec.custom_variants().end(),
                                   [&](const v1::CustomVariant& c) { return CustomVariantName(c) == spec.variants(i); });
    if (!known)
      return Invalid(absl::StrCat("spec.variants[", i, "]"),
                     absl::StrCat(Quote(spec.variants(i)), " names no custom variant of this job (known: ",
                                  absl::StrJoin(spec.custom_variants(), ", ",
                                                [](std::string* o, const v1::CustomVariant& c) {
                                                  o->append(CustomVariantName(c));
                                                }),
                                  ")"));
  }
  if (spec.custom_variants().empty()) return absl::OkStatus();
  if (!op.has_contract())
    return Invalid("spec.custom_variants",
                   absl::StrCat("op '", op.name(), "' takes no custom kernels on the matching workers (a launch ",
                                "contract comes with CUDA workers; see kbench-client kernels --op ", op.name(),
                                " --contract)"));
  std::set<std::string> names(op.dims().begin(), op.dims().end());
  names.insert({"block_x", "block_y", "block_z"});
  for (int i = 0; i < spec.custom_variants_size(); ++i) {
    const v1::CustomVariant& c = spec.custom_variants(i);
    const std::string f = absl::StrCat("spec.custom_variants[", i, "]");
    for (int j = 0; j < c.dtypes_size(); ++j)
      if (std::find(op.dtypes().begin(), op.dtypes().end(), c.dtypes(j)) == op.dtypes().end())
        return Invalid(absl::StrCat(f, ".dtypes[", j, "]"),
                       absl::StrCat("op '", op.name(), "' has no dtype ", DtypeName(c.dtypes(j))));
    for (int j = 0; j < c.grid_size(); ++j) {
      auto e = GridExpr::Parse(c.grid(j));
      if (!e.ok()) return Invalid(absl::StrCat(f, ".grid[", j, "]"), e.status().message());
      for (const std::string& n : e->Names())
        if (!names.contains(n))
          return Invalid(absl::StrCat(f, ".grid[", j, "]"),
                         absl::StrCat("unknown name ", Quote(n), " (known: ", absl::StrJoin(op.dims(), ", "),
                                      ", block_x, block_y, block_z)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace kbench::api
