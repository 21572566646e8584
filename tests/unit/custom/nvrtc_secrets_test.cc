// Custom CUDA source cannot read the worker's files or secrets (worker/custom/README.md, "Validation
// and security"), proved through NVRTC without a GPU: with KBENCH_TOKEN set in this process, every
// #include of another file (/proc/self/environ, /etc/passwd, relative, computed, split by a splice)
// is refused before NVRTC runs, naming the line, and no byte of the file or the environment comes
// back; past the gate (NVRTC called directly) the log still quotes no other file; a long log is
// capped; the contract's headers still compile; the compile child reports its sandbox and leaves
// no private directory behind.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/registry.h"
#include "gtest/gtest.h"
#include "worker/custom/compile_log.h"
#include "worker/custom/contract.h"
#include "worker/custom/kernel_image.h"
#include "worker/custom/nvrtc_compiler.h"

namespace kbench::worker {
namespace {

constexpr char kSecret[] = "s3cr3t-xyz";

v1::LaunchContract VectorAdd() { return *MakeLaunchContract(*kernels::BuiltinRegistry().Find("vector_add")); }

v1::CustomVariant Source(const std::string& source, const std::string& file = "mine.cu") {
  v1::CustomVariant c;
  c.set_name("mine");
  c.set_kind(v1::CUDA_SOURCE);
  c.set_source(source);
  c.set_file_name(file);
  return c;
}

BuildOptions Options(kernels::Dtype dtype = kernels::Dtype::kF32) {
  return {.compute_capability = 90, .dtype = dtype, .cache = nullptr, .cuda_include_dir = DefaultCudaIncludeDir()};
}

// Nothing of the environment or of /etc/passwd.
void ExpectNoLeak(const std::string& text) {
  for (const char* leak : {kSecret, "KBENCH_TOKEN", "root:x:0:0", "/bin/bash", "/usr/sbin/nologin"})
    EXPECT_EQ(text.find(leak), std::string::npos) << "'" << leak << "' in:\n" << text;
}

class NvrtcSecretsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (NvrtcVersionString().find("not installed") != std::string::npos) GTEST_SKIP() << "no NVRTC on this host";
    setenv("KBENCH_TOKEN", kSecret, 1);
  }
  void TearDown() override { unsetenv("KBENCH_TOKEN"); }
};

const std::string kKernel =
    "extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, long long N) {}\n";

TEST_F(NvrtcSecretsTest, IncludesOfOtherFilesAreRefusedBeforeNvrtcNamingTheLine) {
  const std::vector<std::pair<std::string, int>> attacks = {
      {"#include \"/proc/self/environ\"\n", 1},
      {"#include \"/etc/passwd\"\n", 1},
      {"#include </proc/self/environ>\n", 1},
      {"// mine\n#include \"../../../../../../etc/passwd\"\n", 2},
      {"#define F \"/etc/passwd\"\n#include F\n", 2},
      {"#define E </proc/self/environ>\n#include E\n", 2},
      {"\n\n#inc\\\nlude \"/proc/self/environ\"\n", 3},
      {"#if __has_include(\"/etc/passwd\")\n#endif\n", 1},
  };
  for (const auto& [attack, line] : attacks) {
    SCOPED_TRACE(attack);
    for (kernels::Dtype dtype : {kernels::Dtype::kF32, kernels::Dtype::kBF16}) {
      absl::StatusOr<KernelImage> image = BuildKernelImage(Source(attack + kKernel), VectorAdd(), Options(dtype));
      ASSERT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument) << image.status();
      const std::string m(image.status().message());
      // The gate's message, not NVRTC's log: refused before the compiler ran.
      EXPECT_EQ(m.rfind(absl::StrCat("mine.cu(", line, "): error: "), 0), 0u) << m;
      ExpectNoLeak(m);
    }
  }
}

TEST_F(NvrtcSecretsTest, PastTheGateNvrtcsLogStillQuotesNoOtherFile) {
  // NVRTC called directly, as if the gate had let these through: NVRTC reads the files, its log
  // quotes them, and the log that leaves the compile child keeps none of it.
  for (const std::string& include : {"#include \"/etc/passwd\"\n", "#include \"/proc/self/environ\"\n"}) {
    SCOPED_TRACE(include);
    NvrtcRequest req{.source = include + "__global__ void k() { int y = undefined_name; }\n",
                     .file_name = "mine.cu",
                     .options = {"--gpu-architecture=sm_90", "-default-device"}};
    absl::StatusOr<NvrtcOutput> out = CompileWithNvrtc(req, std::chrono::seconds(120));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FALSE(out->compiled);
    ExpectNoLeak(out->log);
    EXPECT_NE(out->log.find("about other files"), std::string::npos) << out->log;
  }
}

TEST_F(NvrtcSecretsTest, AFileNameCannotMakeAnotherFileTheUsers) {
  // The job names its source "/etc/passwd": NVRTC is told "passwd", so a message about the real
  // file would still not count as the user's.
  const std::string bad = "extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, "
                          "kbench_t* out, long long N) { int a = ; }\n";
  absl::StatusOr<KernelImage> image = BuildKernelImage(Source(bad, "/etc/passwd"), VectorAdd(), Options());
  ASSERT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string m(image.status().message());
  EXPECT_NE(m.find("passwd(1): error"), std::string::npos) << m;
  EXPECT_EQ(m.find("/etc/passwd("), std::string::npos) << m;
}

TEST_F(NvrtcSecretsTest, ALongCompileLogIsCapped) {
  // NVRTC stops after its error limit, but each message quotes a 2000-character line.
  std::string body;
  for (int i = 0; i < 200; ++i)
    absl::StrAppend(&body, "  int a", i, " = undefined_", i, "_", std::string(2000, 'q'), ";\n");
  absl::StatusOr<KernelImage> image = BuildKernelImage(
      Source("extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, "
             "long long N) {\n" + body + "}\n"),
      VectorAdd(), Options());
  ASSERT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string m(image.status().message());
  EXPECT_LE(m.size(), kMaxCompileLogBytes + 400);
  EXPECT_NE(m.find("[kbench: log cut at 16384 bytes; "), std::string::npos) << m.substr(m.size() - 200);
  EXPECT_NE(m.find("mine.cu(2): error"), std::string::npos);
}

TEST_F(NvrtcSecretsTest, TheContractsHeadersStillCompile) {
  const std::string add =
      "extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, long long N) {\n"
      "  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < N) out[i] = kbench_from_float(kbench_to_float(x[i]) + kbench_to_float(y[i]));\n"
      "}\n";
  absl::StatusOr<KernelImage> image = BuildKernelImage(Source("#include \"kbench_contract.h\"\n" + add), VectorAdd(),
                                                       Options(kernels::Dtype::kBF16));
  EXPECT_TRUE(image.ok()) << image.status();
  if (!DefaultCudaIncludeDir().empty()) {
    image = BuildKernelImage(Source("#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n" + add), VectorAdd(), Options());
    EXPECT_TRUE(image.ok()) << image.status();
  }
}

TEST_F(NvrtcSecretsTest, TheLogSaysHowTheCompileWasConfinedAndNoDirectoryIsLeft) {
  const auto tmp = std::filesystem::temp_directory_path() / ("kbench-nvrtc-tmp-" + std::to_string(getpid()));
  std::filesystem::create_directories(tmp);
  const char* old = getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  absl::StatusOr<KernelImage> image = BuildKernelImage(Source(VectorAdd().template_source()), VectorAdd(), Options());
  if (saved.empty()) unsetenv("TMPDIR");
  else setenv("TMPDIR", saved.c_str(), 1);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->compile_log.rfind("[kbench sandbox: environment allow-listed, private directory", 0), 0u)
      << image->compile_log;
  std::cout << image->compile_log.substr(0, image->compile_log.find('\n')) << "\n";
  // The compile child's private directory was made under TMPDIR and removed.
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
  std::filesystem::remove_all(tmp);
}

}  // namespace
}  // namespace kbench::worker
