#include "worker/custom/nvrtc_compiler.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "worker/custom/compile_log.h"
#include "worker/custom/compile_sandbox.h"
#include "worker/isolation/child_env.h"

namespace kbench::worker {
namespace {

// NVRTC is loaded at run time: a worker without it still runs built-in, PTX and cubin kernels, and
// CUDA source gets a COMPILE_ERROR that says NVRTC is missing.
struct Nvrtc {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) num_archs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) archs = nullptr;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  decltype(&::nvrtcAddNameExpression) add_name = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcGetLoweredName) lowered = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;
};

absl::StatusOr<Nvrtc> LoadNvrtc() {
  std::vector<std::string> names;
  if (const char* path = std::getenv("KBENCH_NVRTC"); path && *path) names.push_back(path);
  names.push_back(absl::StrCat("libnvrtc.so.", CUDART_VERSION / 1000));
  names.push_back("libnvrtc.so");
  void* lib = nullptr;
  for (const std::string& n : names)
    if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  if (lib == nullptr)
    return absl::UnavailableError(absl::StrCat("NVRTC is not installed on this worker (", names[names.size() - 2],
                                               " not found; set KBENCH_NVRTC to its path)"));
  Nvrtc n;
  absl::Status status = absl::OkStatus();
  auto get = [&](const char* symbol, auto*& fn) {
    void* p = dlsym(lib, symbol);
    if (p == nullptr && status.ok()) status = absl::UnavailableError(absl::StrCat("NVRTC lacks ", symbol));
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  get("nvrtcVersion", n.version);
  get("nvrtcGetNumSupportedArchs", n.num_archs);
  get("nvrtcGetSupportedArchs", n.archs);
  get("nvrtcCreateProgram", n.create);
  get("nvrtcDestroyProgram", n.destroy);
  get("nvrtcAddNameExpression", n.add_name);
  get("nvrtcCompileProgram", n.compile);
  get("nvrtcGetProgramLogSize", n.log_size);
  get("nvrtcGetProgramLog", n.log);
  get("nvrtcGetPTXSize", n.ptx_size);
  get("nvrtcGetPTX", n.ptx);
  get("nvrtcGetCUBINSize", n.cubin_size);
  get("nvrtcGetCUBIN", n.cubin);
  get("nvrtcGetLoweredName", n.lowered);
  get("nvrtcGetErrorString", n.error_string);
  if (!status.ok()) return status;
  return n;
}

absl::StatusOr<const Nvrtc*> GetNvrtc() {
  static const absl::StatusOr<Nvrtc>* nvrtc = new absl::StatusOr<Nvrtc>(LoadNvrtc());
  if (!nvrtc->ok()) return nvrtc->status();
  return &**nvrtc;
}

// The child's reply: "1\n" or "0\n" (compiled), then five length-prefixed fields.
void AppendField(std::string* out, const std::string& f) { absl::StrAppend(out, f.size(), "\n", f); }

bool TakeField(absl::string_view* in, std::string* out) {
  const size_t nl = in->find('\n');
  size_t len = 0;
  if (nl == absl::string_view::npos || !absl::SimpleAtoi(in->substr(0, nl), &len) || in->size() < nl + 1 + len)
    return false;
  *out = std::string(in->substr(nl + 1, len));
  in->remove_prefix(nl + 1 + len);
  return true;
}

// Runs in the child. Only the filtered log leaves it.
std::string CompileHere(const Nvrtc& nv, const NvrtcRequest& req, const std::string& sandbox) {
  std::vector<const char*> header_texts, header_names, options;
  for (const auto& [name, text] : req.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  for (const auto& o : req.options) options.push_back(o.c_str());
  NvrtcOutput out;
  nvrtcProgram prog = nullptr;
  nvrtcResult r = nv.create(&prog, req.source.c_str(), req.file_name.c_str(),
                                     static_cast<int>(header_texts.size()), header_texts.data(), header_names.data());
  if (r == NVRTC_SUCCESS && !req.name_expression.empty()) r = nv.add_name(prog, req.name_expression.c_str());
  if (r == NVRTC_SUCCESS) {
    const nvrtcResult compiled = nv.compile(prog, static_cast<int>(options.size()), options.data());
    size_t size = 0;
    if (nv.log_size(prog, &size) == NVRTC_SUCCESS && size > 1) {
      out.log.resize(size);
      nv.log(prog, out.log.data());
      out.log.resize(size - 1);
    }
    out.compiled = compiled == NVRTC_SUCCESS;
    if (!out.compiled && out.log.empty()) out.log = nv.error_string(compiled);
  } else {
    out.log = absl::StrCat("nvrtc: ", nv.error_string(r));
  }
  if (out.compiled) {
    size_t size = 0;
    if (nv.ptx_size(prog, &size) == NVRTC_SUCCESS && size > 1) {
      out.ptx.resize(size);
      nv.ptx(prog, out.ptx.data());
      out.ptx.resize(size - 1);
    }
    if (nv.cubin_size(prog, &size) == NVRTC_SUCCESS && size > 0) {
      out.cubin.resize(size);
      nv.cubin(prog, out.cubin.data());
    }
    const char* lowered = nullptr;
    if (!req.name_expression.empty() && nv.lowered(prog, req.name_expression.c_str(), &lowered) == NVRTC_SUCCESS &&
        lowered)
      out.lowered_name = lowered;
  }
  if (prog) nv.destroy(&prog);
  std::string reply = out.compiled ? "1\n" : "0\n";
  AppendField(&reply, FilterCompileLog(out.log, req.file_name));
  AppendField(&reply, out.ptx);
  AppendField(&reply, out.cubin);
  AppendField(&reply, out.lowered_name);
  AppendField(&reply, sandbox);
  return reply;
}

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

absl::StatusOr<NvrtcOutput> CompileWithNvrtc(const NvrtcRequest& request, std::chrono::milliseconds limit) {
  absl::StatusOr<const Nvrtc*> nvrtc = GetNvrtc();  // loaded in the parent, so the child only compiles
  if (!nvrtc.ok()) return nvrtc.status();
  // The child's environment and private directory are made here, so the child only switches to them;
  // the directory goes when this returns, whatever happened to the child.
  const CompileChildSetup setup = PrepareCompileChild();
  struct RemoveDir {
    const std::string& dir;
    ~RemoveDir() { RemovePrivateDir(dir); }
  } remove_dir{setup.work_dir};
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("compile: pipe: ", strerror(errno)));
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("compile: fork: ", strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    const CompileSandbox sandbox = EnterCompileChild(setup);
    WriteAll(fds[1], CompileHere(**nvrtc, request, sandbox.Describe()));
    _exit(0);  // no atexit handlers or destructors of the parent's state
  }
  close(fds[1]);
  std::string reply;
  bool timed_out = false;
  char buf[1 << 16];
  while (true) {
    const auto left = limit - std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end: done (or dead)
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return absl::DeadlineExceededError(absl::StrCat("compile time limit of ", limit.count(), " ms exceeded; NVRTC was stopped"));
  if (WIFSIGNALED(wstatus))
    return absl::InternalError(absl::StrCat("NVRTC crashed (signal ", WTERMSIG(wstatus), ": ", strsignal(WTERMSIG(wstatus)), ")"));
  absl::string_view in = reply;
  NvrtcOutput out;
  if (in.size() < 2 || (in[0] != '0' && in[0] != '1'))
    return absl::InternalError("NVRTC's process ended without a reply");
  out.compiled = in[0] == '1';
  in.remove_prefix(2);
  if (!TakeField(&in, &out.log) || !TakeField(&in, &out.ptx) || !TakeField(&in, &out.cubin) ||
      !TakeField(&in, &out.lowered_name) || !TakeField(&in, &out.sandbox))
    return absl::InternalError("NVRTC's process sent a truncated reply");
  out.log = CapLog(out.log);  // the child capped it already; the reply is not trusted to have
  // The runner's log (the worker's runner log) says how each compile was confined, once per change.
  static std::mutex* mu = new std::mutex;
  static std::string* logged = new std::string;
  std::lock_guard<std::mutex> lock(*mu);
  if (*logged != out.sandbox) {
    *logged = out.sandbox;
    fprintf(stderr, "kbench: NVRTC compile child %s\n", out.sandbox.c_str());
  }
  return out;
}

std::string NvrtcVersionString() {
  absl::StatusOr<const Nvrtc*> nvrtc = GetNvrtc();
  int major = 0, minor = 0;
  if (!nvrtc.ok() || (*nvrtc)->version(&major, &minor) != NVRTC_SUCCESS) return "nvrtc (not installed)";
  return absl::StrCat("nvrtc ", major, ".", minor);
}

std::vector<int> NvrtcSupportedArchitectures() {
  absl::StatusOr<const Nvrtc*> nvrtc = GetNvrtc();
  int n = 0;
  if (!nvrtc.ok() || (*nvrtc)->num_archs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> archs(static_cast<size_t>(n));
  if ((*nvrtc)->archs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

}  // namespace kbench::worker
