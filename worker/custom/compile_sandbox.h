// The NVRTC compile child's confinement. The child is forked from the runner and compiles code a
// job sent, so before NVRTC runs it: drops to the allow-listed environment of
// isolation/child_env.h (clearenv, then only those variables), works in a fresh private directory,
// and, where the kernel lets an unprivileged process do it, enters new user, mount and network
// namespaces (no network; the whole file system remounted read-only) and installs a seccomp filter
// that makes socket() fail. What the node refuses is skipped; Describe() says what was applied, and
// the compile log's first line carries it.
#pragma once

#include <string>
#include <vector>

namespace kbench::worker {

// Made in the parent before the fork, so the child only switches to it.
struct CompileChildSetup {
  std::string work_dir;           // Private directory; the parent removes it after the child ends.
  std::vector<std::string> env;   // "NAME=value".
  std::vector<char*> envp;        // Over `env`, NULL-terminated.
  // Keep work_dir writable under a read-only file system (a fresh tmpfs over it): Triton writes
  // its cache and ptxas its temporary files there (worker/triton/).
  bool writable_work_dir = false;
};

// Empty work_dir when no private directory could be made (the child then stays where it is).
CompileChildSetup PrepareCompileChild();

struct CompileSandbox {
  bool environment_scrubbed = false;
  bool private_dir = false;
  bool network_off = false;     // A new, empty network namespace.
  bool read_only_fs = false;    // Every mount read-only in a private mount namespace.
  bool sockets_denied = false;  // seccomp: socket() fails with EPERM.
  bool work_dir_tmpfs = false;  // writable_work_dir: the private directory is a tmpfs.
  // "sandbox: environment allow-listed, private directory, no network, read-only file system,
  // socket() denied" (or what was not available).
  std::string Describe() const;
};

// In the just-forked, single-threaded child. Never fails: what cannot be applied is left out.
CompileSandbox EnterCompileChild(const CompileChildSetup& setup);

}  // namespace kbench::worker
