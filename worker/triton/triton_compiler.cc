// The Triton probe and compile; see triton_compiler.h.
#include "worker/triton/triton_compiler.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/sha256.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "worker/custom/compile_log.h"
#include "worker/triton/python_child.h"

namespace kbench::worker {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

std::string StringField(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? "" : it->second.string_value();
}

int64_t IntField(const Struct& s, const std::string& key, int64_t fallback = 0) {
  auto it = s.fields().find(key);
  return it == s.fields().end() || it->second.kind_case() != Value::kNumberValue
             ? fallback
             : static_cast<int64_t>(it->second.number_value());
}

absl::StatusOr<Struct> ParseReply(const std::string& text) {
  Struct s;
  if (!google::protobuf::util::JsonStringToMessage(text, &s).ok())
    return absl::InternalError("the Triton compile step answered something that is not its reply");
  return s;
}

std::string RequestJson(const TritonCompileRequest& r) {
  Struct s;
  auto& f = *s.mutable_fields();
  f["source"].set_string_value(r.source);
  f["file_name"].set_string_value(r.file_name);
  f["kernel"].set_string_value(r.kernel);
  auto* params = f["params"].mutable_list_value();
  for (const TritonParam& p : r.params) {
    Struct ps;
    (*ps.mutable_fields())["name"].set_string_value(p.name);
    (*ps.mutable_fields())["type"].set_string_value(p.type);
    (*ps.mutable_fields())["div16"].set_bool_value(p.div16);
    *params->add_values()->mutable_struct_value() = ps;
  }
  auto* constexprs = f["constexprs"].mutable_struct_value()->mutable_fields();
  for (const auto& [name, value] : r.constexprs) (*constexprs)[name].set_number_value(static_cast<double>(value));
  f["num_warps"].set_number_value(r.num_warps);
  f["num_stages"].set_number_value(r.num_stages);
  f["arch"].set_number_value(r.arch);
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(s, &json);
  return json;
}

absl::StatusOr<TritonKernelImage> ImageFromReply(const Struct& reply) {
  TritonKernelImage image;
  if (!absl::Base64Unescape(StringField(reply, "cubin"), &image.cubin) || image.cubin.size() < 4 ||
      image.cubin.compare(0, 4, "\x7f" "ELF") != 0)
    return absl::InternalError("the Triton compile step sent no cubin");
  image.name = StringField(reply, "name");
  image.shared_bytes = IntField(reply, "shared");
  image.num_warps = static_cast<int>(IntField(reply, "num_warps", 4));
  image.num_stages = static_cast<int>(IntField(reply, "num_stages", 3));
  image.global_scratch_size = IntField(reply, "global_scratch_size");
  image.global_scratch_align = IntField(reply, "global_scratch_align", 1);
  image.profile_scratch_size = IntField(reply, "profile_scratch_size");
  image.profile_scratch_align = IntField(reply, "profile_scratch_align", 1);
  image.triton_version = StringField(reply, "triton_version");
  if (image.name.empty() || image.num_warps < 1 || image.num_warps > 32 || IntField(reply, "num_ctas", 1) != 1)
    return absl::InternalError("the Triton compile step's metadata is not usable (name, num_warps 1-32, num_ctas 1)");
  return image;
}

}  // namespace

std::string TritonCapability::Describe() const {
  if (!available) return absl::StrCat("absent: ", reason);
  return absl::StrCat("triton ", triton_version, " (python ", python_version, ")");
}

std::string FindPython() {
  if (const char* p = std::getenv("KBENCH_PYTHON"); p && *p) return p;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "/usr/bin:/bin", ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(dir, "/python3");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

TritonCapability ProbeTriton(const std::string& python, std::chrono::milliseconds limit) {
  TritonCapability c;
  c.python = python;
  if (python.empty()) {
    c.reason = "no python3 on PATH (or $KBENCH_PYTHON)";
    return c;
  }
  absl::StatusOr<PythonChildOutput> out = RunPythonChild(python, "probe", "", limit);
  if (!out.ok()) {
    c.reason = absl::StrCat("the probe failed: ", out.status().message());
    return c;
  }
  absl::StatusOr<Struct> reply = ParseReply(out->out);
  if (!reply.ok()) {
    const std::string err = out->err.empty() ? "no reply" : out->err.substr(0, 300);
    c.reason = absl::StrCat(python, " did not run the probe: ", err);
    return c;
  }
  c.python_version = StringField(*reply, "python_version");
  auto ok = reply->fields().find("ok");
  if (ok == reply->fields().end() || !ok->second.bool_value()) {
    c.reason = StringField(*reply, "error");
    return c;
  }
  c.triton_version = StringField(*reply, "triton_version");
  c.available = !c.triton_version.empty();
  if (!c.available) c.reason = "the probe named no Triton version";
  return c;
}

const TritonCapability& NodeTritonCapability() {
  static const TritonCapability* capability = new TritonCapability(ProbeTriton(FindPython()));
  return *capability;
}

std::string TritonCacheKey(const TritonCompileRequest& request, const std::string& triton_version) {
  api::Sha256 h;
  h.Update("kbench-triton-1\n");
  h.Update(absl::StrCat(triton_version.size(), ":", triton_version));
  const std::string& script = TritonCompileScript();
  h.Update(absl::StrCat(script.size(), ":", script));
  // Each field length-prefixed, in a fixed order (the JSON of a Struct has no stable key order).
  auto field = [&h](const std::string& f) { h.Update(absl::StrCat(f.size(), ":", f)); };
  field(request.source);
  field(request.file_name);  // Triton's messages and line info name it
  field(request.kernel);
  for (const TritonParam& p : request.params) field(absl::StrCat(p.name, " ", p.type, " ", p.div16));
  for (const auto& [name, value] : request.constexprs) field(absl::StrCat(name, "=", value));
  field(absl::StrCat(request.num_warps, " ", request.num_stages, " ", request.arch));
  return h.HexDigest();
}

absl::StatusOr<TritonKernelImage> CompileTriton(const TritonCompileRequest& request, const TritonCapability& capability,
                                                const KernelCache* cache, std::chrono::milliseconds limit) {
  if (!capability.available) return absl::UnavailableError(absl::StrCat("Triton is not available on this node: ", capability.reason));
  const std::string key = TritonCacheKey(request, capability.triton_version);
  if (cache != nullptr) {
    if (std::optional<CachedKernel> hit = cache->Get(key); hit && hit->image_kind == "triton") {
      absl::StatusOr<Struct> reply = ParseReply(hit->image);
      absl::StatusOr<TritonKernelImage> image = reply.ok() ? ImageFromReply(*reply) : reply.status();
      if (image.ok()) {
        image->cache_hit = true;
        return image;
      }  // a damaged entry is a miss
    }
  }
  signal(SIGPIPE, SIG_IGN);  // a child that stops reading its request must not end this process
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<PythonChildOutput> out = RunPythonChild(capability.python, "compile", RequestJson(request), limit);
  if (!out.ok()) return out.status();
  // The runner's log says how the compile child was confined, once per change (as NVRTC's does).
  static std::mutex* mu = new std::mutex;
  static std::string* logged = new std::string;
  {
    std::lock_guard<std::mutex> lock(*mu);
    if (*logged != out->sandbox) {
      *logged = out->sandbox;
      fprintf(stderr, "kbench: Triton compile child %s\n", out->sandbox.c_str());
    }
  }
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  absl::StatusOr<Struct> reply = ParseReply(out->out);
  if (!reply.ok()) {
    if (out->term_signal != 0)
      return absl::InternalError(absl::StrCat("the Triton compile step died (signal ", out->term_signal, ")"));
    return absl::InternalError(absl::StrCat("the Triton compile step ended without a reply (exit ", out->exit_code, "): ",
                                            CapLog(out->err, 4096)));
  }
  auto ok = reply->fields().find("ok");
  if (ok == reply->fields().end() || !ok->second.bool_value())
    return absl::InvalidArgumentError(CapLog(StringField(*reply, "error")));
  absl::StatusOr<TritonKernelImage> image = ImageFromReply(*reply);
  if (!image.ok()) return image.status();
  image->compile_ns = ns;
  if (cache != nullptr)
    (void)cache->Put(key, CachedKernel{.image_kind = "triton", .entry = image->name, .compile_log = "", .image = out->out});
  return image;
}

}  // namespace kbench::worker
