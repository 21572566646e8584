// The compile child's confinement; see compile_sandbox.h.
#include "worker/custom/compile_sandbox.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/isolation/child_env.h"

extern char** environ;

namespace kbench::worker {
namespace {

// <linux/mount.h> clashes with <sys/mount.h> on some C libraries; these are its ABI.
struct MountAttr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};
constexpr uint64_t kMountAttrReadOnly = 0x1;
constexpr unsigned kAtRecursive = 0x8000;

void WriteFile(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)!write(fd, text.data(), text.size());
  close(fd);
}

// /proc/self/environ shows the strings the process was started with, whatever environ says now:
// zero them (their range is fields 50-51 of /proc/self/stat) so the child's view holds nothing.
bool ZeroInitialEnvironment() {
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces
  if (p == nullptr) return false;
  unsigned long long start = 0, end = 0;
  // Field 3 follows ") "; env_start and env_end are fields 50 and 51.
  int field = 2;
  for (const char* q = p + 1; *q != '\0' && field < 51; ++q) {
    if (*q != ' ') continue;
    ++field;
    if (field == 50) start = std::strtoull(q + 1, nullptr, 10);
    if (field == 51) end = std::strtoull(q + 1, nullptr, 10);
  }
  if (start == 0 || end <= start || end - start > (64u << 20)) return false;
  std::memset(reinterpret_cast<void*>(start), 0, end - start);
  return true;
}

// New user (to be allowed the rest), mount and network namespaces; then every mount read-only.
void EnterNamespaces(const CompileChildSetup& setup, CompileSandbox* s) {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0) {
    // Root (or CAP_SYS_ADMIN) without user namespaces: the network namespace alone.
    if (unshare(CLONE_NEWNET) == 0) s->network_off = true;
    return;
  }
  s->network_off = true;
  // The same ids inside, so the files NVRTC reads keep their owner.
  WriteFile("/proc/self/setgroups", "deny");
  WriteFile("/proc/self/uid_map", absl::StrCat(uid, " ", uid, " 1"));
  WriteFile("/proc/self/gid_map", absl::StrCat(gid, " ", gid, " 1"));
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return;
#ifdef SYS_mount_setattr
  MountAttr attr{.attr_set = kMountAttrReadOnly, .attr_clr = 0, .propagation = 0, .userns_fd = 0};
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", kAtRecursive, &attr, sizeof attr) == 0) s->read_only_fs = true;
#endif
  // Older kernels: a read-only bind of / over itself (its submounts keep their flags).
  if (!s->read_only_fs && mount("/", "/", nullptr, MS_BIND | MS_REC, nullptr) == 0 &&
      mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0)
    s->read_only_fs = true;
  if (s->read_only_fs && setup.writable_work_dir && !setup.work_dir.empty() &&
      mount("tmpfs", setup.work_dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1g") == 0 &&
      chdir(setup.work_dir.c_str()) == 0)
    s->work_dir_tmpfs = true;
}

// socket() fails with EPERM; every other call is allowed. On architectures not listed here, none.
void DenySockets(CompileSandbox* s) {
#if defined(__x86_64__)
  constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
  return;
#endif
#if defined(__x86_64__) || defined(__aarch64__)
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),  // another ABI (x32, i386): nothing
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
#if defined(__x86_64__)
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 1, 0),  // x32 system calls: denied
#else
      BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0) s->sockets_denied = true;
#endif
}

}  // namespace

CompileChildSetup PrepareCompileChild() {
  CompileChildSetup setup;
  setup.work_dir = MakePrivateDir("nvrtc");
  setup.env = BuildChildEnvironment(environ, {.home = setup.work_dir, .set = {}});
  setup.envp = EnvironmentPointers(setup.env);
  return setup;
}

CompileSandbox EnterCompileChild(const CompileChildSetup& setup) {
  CompileSandbox s;
  clearenv();
  environ = const_cast<char**>(setup.envp.data());
  s.environment_scrubbed = ZeroInitialEnvironment();
  if (!setup.work_dir.empty() && chdir(setup.work_dir.c_str()) == 0) s.private_dir = true;
  EnterNamespaces(setup, &s);
  DenySockets(&s);
  return s;
}

std::string CompileSandbox::Describe() const {
  std::vector<std::string> on, off;
  (environment_scrubbed ? on : off).push_back("environment allow-listed");
  (private_dir ? on : off).push_back("private directory");
  (network_off ? on : off).push_back("no network");
  (read_only_fs ? on : off).push_back("read-only file system");
  (sockets_denied ? on : off).push_back("socket() denied");
  if (work_dir_tmpfs) on.push_back("writable private tmpfs");
  std::string d = absl::StrCat("sandbox: ", on.empty() ? "none" : absl::StrJoin(on, ", "));
  if (!off.empty()) absl::StrAppend(&d, " (not available here: ", absl::StrJoin(off, ", "), ")");
  return d;
}

}  // namespace kbench::worker
