// The tensor-core GEMM rungs compile to the instructions they are written to teach, checked in the
// machine code of the built kernel library (no GPU needed): `cuobjdump --dump-sass` on
// libkbench_kernels.so, split per architecture and per kernel, then
//   - sm_90a GemmWgmmaTma contains HGMMA (wgmma.mma_async; a kernel that only compiled its sm_80
//     stub, or whose arch guard is wrong, has none), UTMALDG (TMA loads of A and B) and UTMASTG
//     (the TMA stores of its epilogue),
//   - GemmMmaSync and GemmWmma contain HMMA on sm_80 and sm_90a (mma.sync / wmma).
// The paths of cuobjdump (the CUDA toolkit's bin directory) and of the library come from CMake. In a
// CUDA build a missing or failing cuobjdump is a failure, saying why (the pip wheels ship only nvcc:
// set KBENCH_CUOBJDUMP to a toolkit's cuobjdump).
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

#ifndef KBENCH_CUOBJDUMP
#error "KBENCH_CUOBJDUMP (path of cuobjdump) must be defined by the build"
#endif
#ifndef KBENCH_KERNELS_LIB
#error "KBENCH_KERNELS_LIB (path of the built kernel library) must be defined by the build"
#endif

namespace {

// arch ("sm_90a") -> mangled kernel name -> its SASS text.
using Sass = std::map<std::string, std::map<std::string, std::string>>;

// Runs cmd and returns its stdout and stderr; *status is its exit status (-1 when it could not run).
std::string RunCommand(const std::string& cmd, int* status) {
  std::string out;
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return out;
  }
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int raw = pclose(pipe);
  *status = raw == -1 ? -1 : WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

// cuobjdump prints, per embedded cubin, "arch = sm_XX" and then for each kernel a
// "Function : <mangled name>" line followed by its instructions.
Sass ParseSass(const std::string& dump) {
  Sass sass;
  std::istringstream in(dump);
  std::string line, arch = "?", function;
  while (std::getline(in, line)) {
    if (const size_t p = line.find("arch = "); p != std::string::npos && line.find("Function") == std::string::npos) {
      arch = line.substr(p + 7);
      while (!arch.empty() && (arch.back() == ' ' || arch.back() == '\r')) arch.pop_back();
      function.clear();
      continue;
    }
    if (const size_t p = line.find("Function : "); p != std::string::npos) {
      function = line.substr(p + 11);
      while (!function.empty() && (function.back() == ' ' || function.back() == '\r')) function.pop_back();
      continue;
    }
    if (!function.empty()) sass[arch][function] += line + "\n";
  }
  return sass;
}

const Sass& LibrarySass(std::string* error) {
  static Sass sass;
  static std::string error_reason;
  static bool done = false;
  if (!done) {
    done = true;
    // The environment overrides the build's paths, for running from a bundle on a GPU host.
    const char* env_tool = std::getenv("KBENCH_CUOBJDUMP");
    const char* env_lib = std::getenv("KBENCH_KERNELS_LIB");
    const std::string tool = env_tool ? env_tool : KBENCH_CUOBJDUMP, lib = env_lib ? env_lib : KBENCH_KERNELS_LIB;
    if (!std::filesystem::exists(tool)) {
      error_reason = "no cuobjdump at " + tool + " (this CUDA toolkit was installed without it; set KBENCH_CUOBJDUMP)";
    } else if (!std::filesystem::exists(lib)) {
      error_reason = "the kernel library is not built at " + lib;
    } else {
      int status = 0;
      const std::string dump = RunCommand("\"" + tool + "\" --dump-sass \"" + lib + "\"", &status);
      if (status != 0) {
        error_reason = "cuobjdump exited with status " + std::to_string(status) + ": " + dump.substr(0, 2000);
      } else {
        sass = ParseSass(dump);
      }
    }
  }
  *error = error_reason;
  return sass;
}

// The kernels of `arch` whose mangled names contain `name`, with their SASS.
std::map<std::string, std::string> KernelsNamed(const Sass& sass, const std::string& arch, const std::string& name) {
  std::map<std::string, std::string> out;
  if (auto it = sass.find(arch); it != sass.end())
    for (const auto& [fn, text] : it->second)
      if (fn.find(name) != std::string::npos) out[fn] = text;
  return out;
}

std::string Inventory(const Sass& sass) {
  std::string s;
  for (const auto& [arch, fns] : sass) {
    s += "\n  " + arch + ":";
    for (const auto& [fn, text] : fns)
      if (fn.find("Gemm") != std::string::npos) s += "\n    " + fn;
  }
  return s.empty() ? "\n  (no kernels found in the dump)" : s;
}

void ExpectInstruction(const std::string& arch, const std::string& kernel, const std::string& opcode) {
  std::string error;
  const Sass& sass = LibrarySass(&error);
  ASSERT_TRUE(error.empty()) << error;
  const auto kernels = KernelsNamed(sass, arch, kernel);
  ASSERT_FALSE(kernels.empty()) << "no " << arch << " kernel named *" << kernel << "* in the library; GEMM kernels found:"
                                << Inventory(sass);
  for (const auto& [fn, text] : kernels)
    EXPECT_NE(text.find(opcode), std::string::npos)
        << arch << " " << fn << " has no " << opcode << " instruction (" << text.size() << " bytes of SASS)";
}

TEST(GemmSass, WgmmaKernelUsesHgmmaOnSm90a) { ExpectInstruction("sm_90a", "GemmWgmmaTma", "HGMMA"); }

TEST(GemmSass, WgmmaKernelMovesTilesWithTmaOnSm90a) {
  ExpectInstruction("sm_90a", "GemmWgmmaTma", "UTMALDG");
  ExpectInstruction("sm_90a", "GemmWgmmaTma", "UTMASTG");
}

TEST(GemmSass, MmaSyncKernelUsesHmma) {
  ExpectInstruction("sm_80", "GemmMmaSync", "HMMA");
  ExpectInstruction("sm_90a", "GemmMmaSync", "HMMA");
}

TEST(GemmSass, WmmaKernelUsesHmma) {
  ExpectInstruction("sm_80", "GemmWmma", "HMMA");
  ExpectInstruction("sm_90a", "GemmWmma", "HMMA");
}

}  // namespace
