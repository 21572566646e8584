// The quantized GEMM rungs compile to the instructions they are written to teach, checked in the
// machine code of the built kernel library (no GPU needed), as gemm_sass_test.cc does for the GEMM
// ladder: `cuobjdump --dump-sass` split per architecture and kernel, then
//   - sm_90a Fp8GemmWgmma issues FP8 warpgroup MMAs: a GMMA instruction with E4M3 operands (the
//     disassembler spells the 8-bit form QGMMA.64x128x32.F32.E4M3.E4M3; a kernel that fell back to
//     its empty stub, or to bf16, has none), TMA loads and stores, and no local-memory spills; its
//     wgmmas are not serialized, and the block-scaled 128x128 kernel waits with one group in flight;
//   - GemvMagic (cuda_v3_gemv_magic) dequantizes with LOP3 into bf16 pairs and subtracts the zero
//     point with one packed bf16 instruction (HADD2/HFMA2 .BF16), on sm_80 and sm_90a, without spills;
//   - GemvMma* (cuda_v4_mma_gemv: GemvMmaLean at M <= 8, GemvMmaT, the register-fed template, and
//     GemvMmaSmemA, A staged in shared memory) multiply on the tensor cores (HMMA) and dequantize with LOP3, without spills;
//   - GemvMmaMarlin (cuda_v4_mma_marlin) is built for every M range (1 to 16 n8 tiles) on sm_80 and
//     sm_90a, fills its pipeline with cp.async (LDGSTS), multiplies with HMMA, without spills;
//   - sm_90a W4a16Wgmma (cuda_v5_wgmma_mixed) issues bf16 warpgroup MMAs (HGMMA) fed by LOP3-dequantized
//     registers and TMA loads, without spills.
// Paths of cuobjdump and the library come from CMake (KBENCH_CUOBJDUMP / KBENCH_KERNELS_LIB in the
// environment override them, for a bundle).
#include <algorithm>
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

using Sass = std::map<std::string, std::map<std::string, std::string>>;  // arch -> kernel -> SASS

std::string Dump(std::string* error) {
  const char* env_tool = std::getenv("KBENCH_CUOBJDUMP");
  const char* env_lib = std::getenv("KBENCH_KERNELS_LIB");
  const std::string tool = env_tool ? env_tool : KBENCH_CUOBJDUMP, lib = env_lib ? env_lib : KBENCH_KERNELS_LIB;
  if (!std::filesystem::exists(tool)) {
    *error = "no cuobjdump at " + tool + " (set KBENCH_CUOBJDUMP)";
    return "";
  }
  if (!std::filesystem::exists(lib)) {
    *error = "the kernel library is not built at " + lib;
    return "";
  }
  std::string out;
  FILE* pipe = popen(("\"" + tool + "\" --dump-sass \"" + lib + "\" 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    *error = "cannot run " + tool;
    return "";
  }
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  if (pclose(pipe) != 0) *error = "cuobjdump failed: " + out.substr(0, 2000);
  return out;
}

const Sass& LibrarySass(std::string* error) {
  static Sass sass;
  static std::string why;
  static bool done = false;
  if (!done) {
    done = true;
    std::istringstream in(Dump(&why));
    std::string line, arch = "?", function;
    while (std::getline(in, line)) {
      if (const size_t p = line.find("arch = "); p != std::string::npos && line.find("Function") == std::string::npos) {
        arch = line.substr(p + 7);
        while (!arch.empty() && (arch.back() == ' ' || arch.back() == '\r')) arch.pop_back();
        function.clear();
      } else if (const size_t q = line.find("Function : "); q != std::string::npos) {
        function = line.substr(q + 11);
        while (!function.empty() && (function.back() == ' ' || function.back() == '\r')) function.pop_back();
      } else if (!function.empty()) {
        sass[arch][function] += line + "\n";
      }
    }
  }
  *error = why;
  return sass;
}

// The SASS of every `arch` kernel whose mangled name contains `name`; fails the test when none.
std::map<std::string, std::string> Kernels(const std::string& arch, const std::string& name) {
  std::string error;
  const Sass& sass = LibrarySass(&error);
  std::map<std::string, std::string> out;
  EXPECT_TRUE(error.empty()) << error;
  if (auto it = sass.find(arch); it != sass.end())
    for (const auto& [fn, text] : it->second)
      if (fn.find(name) != std::string::npos) out[fn] = text;
  EXPECT_FALSE(out.empty()) << "no " << arch << " kernel named *" << name << "* in the library";
  return out;
}

bool HasLineWith(const std::string& text, const std::string& a, const std::string& b) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
  return false;
}

void ExpectNoSpills(const std::string& fn, const std::string& text) {
  EXPECT_EQ(text.find("LDL"), std::string::npos) << fn << " reads local memory (spills)";
  EXPECT_EQ(text.find("STL"), std::string::npos) << fn << " writes local memory (spills)";
}

TEST(QgemmSass, WgmmaFp8KernelIssuesE4m3WarpgroupMmas) {
  for (const auto& [fn, text] : Kernels("sm_90a", "Fp8GemmWgmma")) {
    EXPECT_TRUE(HasLineWith(text, "GMMA", ".E4M3")) << fn << " has no GMMA with an E4M3 operand";
    EXPECT_NE(text.find("UTMALDG"), std::string::npos) << fn;
    EXPECT_NE(text.find("UTMASTG"), std::string::npos) << fn;
    ExpectNoSpills(fn, text);
  }
}

// Longest run of GMMA instructions with no wait on the warpgroup's MMAs between them. ptxas
// serializes wgmmas it cannot prove safe (warning C7514) by waiting after each one: a run of 1.
int LongestGmmaRun(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int run = 0, longest = 0;
  while (std::getline(in, line)) {
    if (line.find("GMMA.") != std::string::npos) longest = std::max(longest, ++run);
    if (line.find("WARPGROUP.DEPBAR") != std::string::npos) run = 0;
  }
  return longest;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every FP8 kernel issues a k tile's four wgmmas back to back; the block-scaled 128x128 kernel
// (template <1, false, true>) keeps one group in flight while it promotes the other
// (wgmma.wait_group 1): three such waits in its four-tile loop and one in the pair loop after it.
// A loop that carries a group across its back edge loses them to C7514.
TEST(QgemmSass, Fp8WgmmasAreNotSerialized) {
  for (const auto& [fn, text] : Kernels("sm_90a", "Fp8GemmWgmma")) {
    EXPECT_GE(LongestGmmaRun(text), 4) << fn << ": wgmmas serialized (a wait after each)";
    if (fn.find("Fp8GemmWgmmaILi1ELb0ELb1E") != std::string::npos)
      EXPECT_GE(Count(text, "WARPGROUP.DEPBAR.LE gsb0, 0x1"), 4)
          << fn << ": fewer waits that leave one wgmma group in flight than the loops have";
  }
  EXPECT_EQ(Kernels("sm_90a", "Fp8GemmWgmmaILi1ELb0ELb1E").size(), 1u);  // the 128x128 block kernel is built
}

TEST(QgemmSass, MagicGemvDequantizesWithLop3AndPackedBf16) {
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const auto& [fn, text] : Kernels(arch, "GemvMagic")) {
      EXPECT_NE(text.find("LOP3.LUT"), std::string::npos) << arch << " " << fn;
      EXPECT_TRUE(HasLineWith(text, "HADD2.BF16", "") || HasLineWith(text, "HFMA2.BF16", ""))
          << arch << " " << fn << ": no packed bf16 subtraction";
      ExpectNoSpills(fn, text);
    }
}

TEST(QgemmSass, MmaGemvUsesHmmaWithoutSpills) {
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const auto& [fn, text] : Kernels(arch, "GemvMma")) {
      EXPECT_NE(text.find("HMMA"), std::string::npos) << arch << " " << fn;
      EXPECT_NE(text.find("LOP3.LUT"), std::string::npos) << arch << " " << fn;
      ExpectNoSpills(fn, text);
    }
}

TEST(QgemmSass, MarlinStreamsThroughCpAsyncIntoHmma) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const auto kernels = Kernels(arch, "GemvMmaMarlin");
    EXPECT_EQ(kernels.size(), 5u) << arch << ": one kernel for each of 1, 2, 4, 8 and 16 n8 tiles";
    for (const auto& [fn, text] : kernels) {
      EXPECT_NE(text.find("LDGSTS"), std::string::npos) << arch << " " << fn << ": no cp.async";
      EXPECT_NE(text.find("HMMA"), std::string::npos) << arch << " " << fn;
      EXPECT_NE(text.find("LOP3.LUT"), std::string::npos) << arch << " " << fn;
      ExpectNoSpills(fn, text);
    }
  }
}

TEST(QgemmSass, WgmmaW4a16UsesHgmmaWithoutSpills) {
  for (const auto& [fn, text] : Kernels("sm_90a", "W4a16Wgmma")) {
    EXPECT_TRUE(HasLineWith(text, "HGMMA", ".BF16")) << fn << " has no bf16 HGMMA";
    EXPECT_NE(text.find("LOP3.LUT"), std::string::npos) << fn;
    EXPECT_NE(text.find("UTMALDG"), std::string::npos) << fn;
    ExpectNoSpills(fn, text);
  }
}

}  // namespace
