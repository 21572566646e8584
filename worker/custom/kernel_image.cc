#include "worker/custom/kernel_image.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/custom_spec.h"
#include "api/sha256.h"
#include "worker/custom/contract.h"
#include "worker/custom/nvrtc_compiler.h"
#include "worker/custom/ptx_signature.h"
#include "worker/custom/source_includes.h"

namespace kbench::worker {
namespace {

std::string Sha256Hex(absl::string_view bytes) {
  api::Sha256 h;
  h.Update(bytes);
  return h.HexDigest();
}

std::string DtypeMacro(kernels::Dtype d) {
  return d == kernels::Dtype::kBF16 ? "KBENCH_DTYPE_BF16" : d == kernels::Dtype::kF16 ? "KBENCH_DTYPE_F16" : "KBENCH_DTYPE_F32";
}

std::string EntryOf(const v1::CustomVariant& custom, const v1::LaunchContract& contract) {
  return custom.entry().empty() ? contract.entry() : custom.entry();
}

// The name NVRTC gives the source in its messages: the job's file name without directories, in
// plain characters, and never one of the contract's own names (whose messages the log keeps).
std::string SourceFileName(const v1::CustomVariant& custom) {
  std::string name = custom.file_name().empty() ? absl::StrCat(custom.name(), ".cu") : custom.file_name();
  if (const size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  for (char& c : name)
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' && c != '+') c = '_';
  if (name.empty() || name[0] == '.') name = absl::StrCat("source", name);
  if (name == kContractHeaderName || name == "kbench_contract_check") name = absl::StrCat("user_", name);
  return name;
}

absl::StatusOr<KernelImage> CompileSource(const v1::CustomVariant& custom, const v1::LaunchContract& contract,
                                          const BuildOptions& options, KernelImage image) {
  const std::string entry = EntryOf(custom, contract);
  NvrtcRequest req;
  req.file_name = SourceFileName(custom);
  // Before the cache and the compiler: the source may include only the contract's headers, and no
  // option may add a path (the job's options were checked on the way in; this worker checks again).
  if (absl::Status s = CheckSourceIncludes(custom.source(), req.file_name); !s.ok()) return s;
  for (int i = 0; i < custom.compile_options_size(); ++i)
    if (!api::IsAllowedCompileOption(custom.compile_options(i)))
      return absl::InvalidArgumentError(absl::StrCat("compile_options[", i, "] is not allowed"));
  // The checks go after the user's code, so its line numbers in NVRTC's messages stay its own.
  req.source = absl::StrCat(custom.source(), "\n", ContractCheckSource(contract, entry));
  req.headers = {{kContractHeaderName, ContractHeader()}};
  req.name_expression = absl::StrCat("&", entry);
  image.arch = NvrtcTarget(options.compute_capability);
  // --no-source-include: a quoted #include is not looked up beside the source (NVRTC's working
  // directory); NVRTC searches no system directory by default, so only -I below is searched.
  req.options = {absl::StrCat("--gpu-architecture=", image.arch), "-default-device", "--no-source-include",
                 absl::StrCat("--pre-include=", kContractHeaderName), absl::StrCat("-D", DtypeMacro(options.dtype))};
  if (!options.cuda_include_dir.empty()) req.options.push_back(absl::StrCat("-I", options.cuda_include_dir));
  for (const auto& o : custom.compile_options()) req.options.push_back(o);
  image.compiler = NvrtcVersionString();

  // Everything that decides NVRTC's output is in the key.
  std::string key_text = "kbench-custom-kernel 2";  // 2: logs filtered, sandboxed compile
  for (const std::string& part : {image.compiler, req.file_name, req.source, ContractHeader(), req.name_expression})
    absl::StrAppend(&key_text, "\n", part.size(), ":", part);
  for (const std::string& o : req.options) absl::StrAppend(&key_text, "\n", o.size(), ":", o);
  const std::string key = Sha256Hex(key_text);
  if (options.cache) {
    if (std::optional<CachedKernel> hit = options.cache->Get(key)) {
      image.kind = hit->image_kind == "ptx" ? v1::PTX : v1::CUBIN;
      image.bytes = std::move(hit->image);
      image.entry = std::move(hit->entry);
      image.compile_log = std::move(hit->compile_log);
      image.cache_hit = true;
      return image;
    }
  }
  const int64_t timeout_ns = custom.compile_timeout_ns() > 0 ? custom.compile_timeout_ns() : api::kDefaultCompileTimeoutNs;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<NvrtcOutput> out =
      CompileWithNvrtc(req, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(timeout_ns)));
  image.compile_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  if (!out.ok()) return out.status();
  const std::string where = absl::StrCat("(", image.compiler, ", ", image.arch, ", ", DtypeMacro(options.dtype), ")");
  // The log's first line says how the compile was confined (compile_sandbox.h).
  const std::string log = absl::StrCat("[kbench ", out->sandbox, "]\n", out->log);
  if (!out->compiled) return absl::InvalidArgumentError(absl::StrCat("compile error ", where, ":\n", log));
  image.entry = out->lowered_name.empty() ? entry : out->lowered_name;
  image.compile_log = log;
  // The static_asserts checked the C++ types; the PTX says what the machine code takes.
  if (!out->ptx.empty()) {
    absl::StatusOr<std::vector<PtxParam>> params = PtxEntryParams(out->ptx, image.entry);
    if (!params.ok()) return absl::InvalidArgumentError(absl::StrCat("contract violation: ", params.status().message()));
    std::vector<int> sizes;
    for (const PtxParam& p : *params) sizes.push_back(p.size_bytes);
    if (absl::Status s = CheckParamSizes(sizes, contract, entry); !s.ok()) return s;
  }
  if (!out->cubin.empty()) {
    image.kind = v1::CUBIN;
    image.bytes = std::move(out->cubin);
  } else if (!out->ptx.empty()) {
    image.kind = v1::PTX;
    image.bytes = std::move(out->ptx);
  } else {
    return absl::InternalError(absl::StrCat("NVRTC produced neither cubin nor PTX ", where));
  }
  if (options.cache) {
    // A cache that cannot be written costs the next compile, not this result.
    (void)options.cache->Put(key, {.image_kind = image.kind == v1::PTX ? "ptx" : "cubin",
                                   .entry = image.entry,
                                   .compile_log = image.compile_log,
                                   .image = image.bytes});
  }
  return image;
}

}  // namespace

std::string NvrtcTarget(int cc) {
  const std::vector<int> archs = NvrtcSupportedArchitectures();
  if (!archs.empty() && std::find(archs.begin(), archs.end(), cc) == archs.end()) {
    int best = 0;
    for (int a : archs)
      if (a <= cc) best = std::max(best, a);
    if (best > 0) return absl::StrCat("compute_", best);
  }
  if (cc == 90 || cc >= 100) return absl::StrCat("sm_", cc, "a");
  return absl::StrCat("sm_", cc);
}

std::string DefaultCudaIncludeDir() {
  std::vector<std::string> candidates;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) candidates.push_back(absl::StrCat(home, "/include"));
  candidates.push_back("/usr/local/cuda/include");
  std::error_code ec;
  for (const std::string& dir : candidates)
    if (std::filesystem::exists(dir + "/cuda_bf16.h", ec)) return dir;
  return "";
}

absl::StatusOr<KernelImage> BuildKernelImage(const v1::CustomVariant& custom, const v1::LaunchContract& contract,
                                             const BuildOptions& options) {
  KernelImage image;
  image.source_sha256 = Sha256Hex(custom.source());
  const std::string entry = EntryOf(custom, contract);
  switch (custom.kind()) {
    case v1::CUSTOM_SOURCE_KIND_UNSPECIFIED:
    case v1::CUDA_SOURCE:
      return CompileSource(custom, contract, options, std::move(image));
    case v1::PTX: {
      absl::StatusOr<std::vector<PtxParam>> params = PtxEntryParams(custom.source(), entry);
      if (!params.ok()) return absl::InvalidArgumentError(absl::StrCat("contract violation: ", params.status().message()));
      std::vector<int> sizes;
      for (const PtxParam& p : *params) sizes.push_back(p.size_bytes);
      if (absl::Status s = CheckParamSizes(sizes, contract, entry); !s.ok()) return s;
      image.kind = v1::PTX;
      image.bytes = custom.source();
      image.entry = entry;
      image.arch = absl::StrCat("sm_", options.compute_capability);
      return image;
    }
    case v1::CUBIN:
      if (!absl::StartsWith(custom.source(), "\x7f" "ELF"))
        return absl::InvalidArgumentError("not a cubin: the bytes do not start with an ELF header");
      image.kind = v1::CUBIN;
      image.bytes = custom.source();
      image.entry = entry;
      image.arch = absl::StrCat("sm_", options.compute_capability);
      return image;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown source kind ", static_cast<int>(custom.kind())));
  }
}

}  // namespace kbench::worker
