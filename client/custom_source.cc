#include "client/custom_source.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/custom_spec.h"
#include "api/grid_expr.h"

namespace kbench::client {
namespace {

absl::Status FlagError(absl::string_view flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", message));
}

absl::StatusOr<v1::CustomSourceKind> KindOf(const ParsedArgs& args, const std::string& path) {
  std::string kind = args.Get("source-kind");
  if (kind.empty()) {
    const std::string ext = absl::AsciiStrToLower(std::filesystem::path(path).extension().string());
    if (ext == ".ptx") return v1::PTX;
    if (ext == ".cubin") return v1::CUBIN;
    if (ext == ".py") return v1::TRITON_SOURCE;
    return v1::CUDA_SOURCE;
  }
  if (kind == "cuda") return v1::CUDA_SOURCE;
  if (kind == "ptx") return v1::PTX;
  if (kind == "cubin") return v1::CUBIN;
  if (kind == "triton") return v1::TRITON_SOURCE;
  return FlagError("source-kind", absl::StrCat("unknown kind '", kind.substr(0, 32), "' (known: cuda, ptx, cubin, triton)"));
}

// The file's stem made into a variant name: "my_rmsnorm.cu" -> "my_rmsnorm".
std::string NameFromPath(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  for (char& c : stem)
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  return stem.substr(0, api::kMaxCustomNameBytes);
}

}  // namespace

std::vector<FlagSpec> CustomSourceFlagSpecs() {
  return {
      {"source", "FILE", "Custom kernel to run beside the op's variants: CUDA C++ (compiled on the worker by NVRTC), "
                         "PTX, cubin, or Triton (.py: a @triton.jit kernel and its kbench_launch, compiled on the "
                         "worker by Triton), under the op's launch contract (kernels --op OP --contract)"},
      {"source-kind", "K", "cuda, ptx, cubin or triton (default: from the extension; .ptx, .cubin, .py, else cuda)"},
      {"name", "N", "Name of the custom variant, run as custom:N (default: the file's stem)"},
      {"entry", "NAME", "Kernel to launch (default: the contract's, kbench_<op>)"},
      {"block", "X[,Y[,Z]]", "Threads per block (default: the contract's)"},
      {"grid", "EXPR[,EXPR[,EXPR]]", "Grid over the op's dims and block_x/y/z, e.g. 'cdiv(N, block_x)' (default: the contract's)"},
      {"smem", "BYTES", "Dynamic shared memory per block (default 0)"},
      {"nvrtc-option", "OPT", "Extra NVRTC option: -DNAME[=V], -use_fast_math, --maxrregcount=N, ...", true},
      {"compile-timeout-ms", "MS", "Compile time limit, NVRTC or Triton (default 60000)"},
  };
}

absl::Status AddCustomSource(const ParsedArgs& args, v1::JobSpec* spec) {
  if (!args.Has("source")) {
    for (const char* f : {"source-kind", "name", "entry", "block", "grid", "smem", "nvrtc-option", "compile-timeout-ms"})
      if (args.Has(f)) return FlagError(f, "only with --source");
    return absl::OkStatus();
  }
  if (args.Has("suite")) return FlagError("source", "cannot be combined with --suite (a custom kernel is for one op)");
  const std::string path = args.Get("source");
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return FlagError("source", absl::StrCat("cannot read '", path, "': ", ec.message()));
  if (static_cast<int64_t>(size) > api::kMaxCustomSourceBytes)
    return FlagError("source", absl::StrCat("'", path, "' is ", size, " bytes; at most ", api::kMaxCustomSourceBytes,
                                            " (1 MiB)"));
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (!in) return FlagError("source", absl::StrCat("cannot read '", path, "'"));

  v1::CustomVariant c;
  absl::StatusOr<v1::CustomSourceKind> kind = KindOf(args, path);
  if (!kind.ok()) return kind.status();
  c.set_kind(*kind);
  if (*kind == v1::TRITON_SOURCE) {
    // Triton's launch (kernel, grid, warps, constexprs) is the file's kbench_launch, not flags.
    for (const char* f : {"entry", "block", "grid", "smem", "nvrtc-option"})
      if (args.Has(f)) return FlagError(f, "not for a Triton --source: its kbench_launch says how it is launched");
  }
  c.set_source(bytes.str());
  c.set_file_name(std::filesystem::path(path).filename().string());
  c.set_name(args.Has("name") ? args.Get("name") : NameFromPath(path));
  if (c.name().empty()) return FlagError("name", "required: the file name gives none");
  c.set_entry(args.Get("entry"));
  if (args.Has("block")) {
    for (absl::string_view part : absl::StrSplit(args.Get("block"), ',')) {
      uint32_t v = 0;
      if (!absl::SimpleAtoi(part, &v) || v < 1)
        return FlagError("block", absl::StrCat("expected X[,Y[,Z]] of positive integers, got '", args.Get("block"), "'"));
      c.add_block(v);
    }
  }
  if (args.Has("grid")) {
    for (const std::string& e : api::SplitTopLevelCommas(args.Get("grid"))) {
      if (auto parsed = api::GridExpr::Parse(e); !parsed.ok()) return FlagError("grid", parsed.status().message());
      c.add_grid(e);
    }
  }
  if (args.Has("smem")) {
    auto v = args.GetInt("smem", 0);
    if (!v.ok()) return v.status();
    c.set_dynamic_shared_bytes(*v);
  }
  for (const std::string& o : args.GetAll("nvrtc-option")) c.add_compile_options(o);
  if (args.Has("compile-timeout-ms")) {
    auto ms = args.GetDouble("compile-timeout-ms", 0);
    if (!ms.ok()) return ms.status();
    if (*ms <= 0 || *ms * 1e6 > static_cast<double>(api::kMaxCompileTimeoutNs))
      return FlagError("compile-timeout-ms", absl::StrCat("must be in (0, ", api::kMaxCompileTimeoutNs / 1'000'000, "]"));
    c.set_compile_timeout_ns(static_cast<int64_t>(*ms * 1e6));
  }
  // PTX and cubin are machine code for one element type: the job's --dtype says which.
  if (c.kind() != v1::CUDA_SOURCE && c.kind() != v1::TRITON_SOURCE) {
    if (spec->dtypes_size() != 1)
      return FlagError("dtype", "give exactly one with a PTX or cubin --source (it is compiled for one dtype)");
    c.add_dtypes(spec->dtypes(0));
  }
  // Named variants run alone: the custom one joins them.
  if (!spec->variants().empty()) spec->add_variants(api::CustomVariantName(c));
  *spec->add_custom_variants() = std::move(c);
  return absl::OkStatus();
}

}  // namespace kbench::client
