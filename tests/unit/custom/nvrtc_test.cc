// Custom CUDA source through NVRTC, without a GPU: every op's template compiles for sm_80 and sm_90a
// in each dtype and passes its contract's checks; a syntax error comes back with NVRTC's log; a
// signature that breaks the contract is refused with the contract's words; the second compile is a
// cache hit; the compile time limit stops NVRTC.
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "absl/strings/str_replace.h"
#include "core/registry.h"
#include "gtest/gtest.h"
#include "worker/custom/contract.h"
#include "worker/custom/kernel_image.h"
#include "worker/custom/nvrtc_compiler.h"
#include "worker/custom/ptx_signature.h"

namespace kbench::worker {
namespace {

v1::LaunchContract ContractOf(const std::string& op) { return *MakeLaunchContract(*kernels::BuiltinRegistry().Find(op)); }

v1::CustomVariant Source(const std::string& source, const std::string& file = "mine.cu") {
  v1::CustomVariant c;
  c.set_name("mine");
  c.set_kind(v1::CUDA_SOURCE);
  c.set_source(source);
  c.set_file_name(file);
  return c;
}

BuildOptions Options(int cc = 90, kernels::Dtype dtype = kernels::Dtype::kF32, const KernelCache* cache = nullptr) {
  return {.compute_capability = cc, .dtype = dtype, .cache = cache, .cuda_include_dir = DefaultCudaIncludeDir()};
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

class NvrtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Built only in CUDA builds, where NVRTC comes with the toolkit: failing to load it is a failure.
    ASSERT_EQ(NvrtcVersionString().find("not installed"), std::string::npos)
        << "NVRTC did not load in a CUDA build (set KBENCH_NVRTC to libnvrtc's path): " << NvrtcVersionString();
  }
};

TEST_F(NvrtcTest, EveryTemplateCompilesAndMatchesItsContract) {
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops()) {
    std::optional<v1::LaunchContract> contract = MakeLaunchContract(op);
    if (!contract) continue;
    for (kernels::Dtype dtype : op.dtypes) {
      for (int cc : {80, 90}) {
        SCOPED_TRACE(op.name + " " + kernels::DtypeName(dtype) + " sm_" + std::to_string(cc));
        absl::StatusOr<KernelImage> image = BuildKernelImage(Source(contract->template_source()), *contract,
                                                             Options(cc, dtype));
        ASSERT_TRUE(image.ok()) << image.status();
        EXPECT_EQ(image->kind, v1::CUBIN);
        EXPECT_EQ(image->entry, contract->entry());  // extern "C": the name itself
        EXPECT_EQ(image->arch, cc == 90 ? "sm_90a" : "sm_80");
        EXPECT_FALSE(image->bytes.empty());
        EXPECT_EQ(image->bytes.substr(0, 4), "\x7f" "ELF");
        EXPECT_FALSE(image->cache_hit);
      }
    }
  }
}

TEST_F(NvrtcTest, Bf16TemplatesCompileWithoutTheCudaHeadersToo) {
  for (const char* name : {"rmsnorm", "vector_add", "gemm"}) {
    const v1::LaunchContract c = ContractOf(name);
    BuildOptions o = Options(90, kernels::Dtype::kBF16);
    o.cuda_include_dir = "";
    absl::StatusOr<KernelImage> image = BuildKernelImage(Source(c.template_source()), c, o);
    EXPECT_TRUE(image.ok()) << name << ": " << image.status();
  }
}

TEST_F(NvrtcTest, TheTemplatesPtxHasTheContractsEntry) {
  // Compiled for a virtual architecture, NVRTC gives PTX only: the signature reader sees the contract.
  const v1::LaunchContract c = ContractOf("rmsnorm");
  NvrtcRequest req{.source = c.template_source(), .file_name = "t.cu",
                   .headers = {{kContractHeaderName, ContractHeader()}},
                   .options = {"--gpu-architecture=compute_80", "--pre-include=kbench_contract.h", "-DKBENCH_DTYPE_F32"},
                   .name_expression = "&kbench_rmsnorm"};
  absl::StatusOr<NvrtcOutput> out = CompileWithNvrtc(req, std::chrono::seconds(120));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->compiled) << out->log;
  EXPECT_TRUE(out->cubin.empty());
  EXPECT_EQ(out->lowered_name, "kbench_rmsnorm");
  absl::StatusOr<std::vector<PtxParam>> params = PtxEntryParams(out->ptx, "kbench_rmsnorm");
  ASSERT_TRUE(params.ok()) << params.status();
  std::vector<int> sizes;
  for (const PtxParam& p : *params) sizes.push_back(p.size_bytes);
  EXPECT_TRUE(CheckParamSizes(sizes, c, "kbench_rmsnorm").ok());

  // The same PTX, sent as a job's PTX, is accepted as is.
  v1::CustomVariant ptx = Source(out->ptx);
  ptx.set_kind(v1::PTX);
  absl::StatusOr<KernelImage> image = BuildKernelImage(ptx, c, Options());
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->kind, v1::PTX);
  EXPECT_EQ(image->entry, "kbench_rmsnorm");
}

TEST_F(NvrtcTest, ASyntaxErrorComesBackWithTheCompilersLog) {
  const v1::LaunchContract c = ContractOf("vector_add");
  const std::string bad =
      "extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, long long N) {\n"
      "  const long long i = blockIdx.x * blockDim.x + threadIdx.x\n"
      "  if (i < N) out[i] = x[i] + y[i];\n"
      "}\n";
  absl::StatusOr<KernelImage> image = BuildKernelImage(Source(bad, "my_add.cu"), c, Options());
  ASSERT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument) << image.status();
  const std::string m = Message(image.status());
  EXPECT_NE(m.find("compile error (nvrtc "), std::string::npos) << m;
  EXPECT_NE(m.find("my_add.cu(3)"), std::string::npos) << m;  // the user's own line numbers
  EXPECT_NE(m.find("error"), std::string::npos) << m;
}

TEST_F(NvrtcTest, ASignatureThatBreaksTheContractIsRefusedWithItsWords) {
  const v1::LaunchContract c = ContractOf("vector_add");
  // A 32-bit N.
  absl::StatusOr<KernelImage> image = BuildKernelImage(
      Source("extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, const kbench_t* y, kbench_t* out, int N) {}"),
      c, Options());
  ASSERT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(image.status()).find("kbench contract: parameter 4 (N) must be a 64-bit integer (long long)"),
            std::string::npos)
      << image.status();
  // A missing parameter.
  image = BuildKernelImage(
      Source("extern \"C\" __global__ void kbench_vector_add(const kbench_t* x, kbench_t* out, long long N) {}"), c,
      Options());
  EXPECT_NE(Message(image.status()).find("kbench contract: the kernel must be void kbench_vector_add(const kbench_t* x, "
                                         "const kbench_t* y, kbench_t* out, long long N)"),
            std::string::npos)
      << image.status();
  // float pointers in a bf16 build.
  image = BuildKernelImage(
      Source("extern \"C\" __global__ void kbench_vector_add(const float* x, const float* y, float* out, long long N) {}"),
      c, Options(90, kernels::Dtype::kBF16));
  EXPECT_NE(Message(image.status()).find("parameter 1 (x) must be a pointer to kbench_t elements"), std::string::npos)
      << image.status();
  // No kernel of the contract's name.
  image = BuildKernelImage(Source("extern \"C\" __global__ void other() {}"), c, Options());
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(image.status()).find("kbench_vector_add"), std::string::npos) << image.status();
}

TEST_F(NvrtcTest, AnEntryWithCppLinkageIsFoundByItsLoweredName) {
  v1::CustomVariant c = Source("__global__ void my_add(const kbench_t* x, const kbench_t* y, kbench_t* out, long long N) {"
                               " long long i = threadIdx.x; if (i < N) out[i] = x[i] + y[i]; }");
  c.set_entry("my_add");
  absl::StatusOr<KernelImage> image = BuildKernelImage(c, ContractOf("vector_add"), Options());
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_NE(image->entry, "my_add");
  EXPECT_NE(image->entry.find("my_add"), std::string::npos);  // _Z6my_add...
}

TEST_F(NvrtcTest, TheSecondCompileIsACacheHit) {
  const auto dir = std::filesystem::temp_directory_path() / ("kbench-nvrtc-cache-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const KernelCache cache(dir.string());
  const v1::LaunchContract c = ContractOf("softmax");
  const v1::CustomVariant source = Source(c.template_source());
  absl::StatusOr<KernelImage> first = BuildKernelImage(source, c, Options(90, kernels::Dtype::kF32, &cache));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_GT(first->compile_ns, 0);
  absl::StatusOr<KernelImage> second = BuildKernelImage(source, c, Options(90, kernels::Dtype::kF32, &cache));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->compile_ns, 0);
  EXPECT_EQ(second->bytes, first->bytes);
  EXPECT_EQ(second->entry, first->entry);
  // Another dtype, architecture or option is another key.
  EXPECT_FALSE(BuildKernelImage(source, c, Options(90, kernels::Dtype::kBF16, &cache))->cache_hit);
  EXPECT_FALSE(BuildKernelImage(source, c, Options(80, kernels::Dtype::kF32, &cache))->cache_hit);
  v1::CustomVariant fast = source;
  fast.add_compile_options("-use_fast_math");
  EXPECT_FALSE(BuildKernelImage(fast, c, Options(90, kernels::Dtype::kF32, &cache))->cache_hit);
  EXPECT_TRUE(BuildKernelImage(fast, c, Options(90, kernels::Dtype::kF32, &cache))->cache_hit);
  std::filesystem::remove_all(dir);
}

TEST_F(NvrtcTest, TheCompileTimeLimitStopsNvrtc) {
  const v1::LaunchContract c = ContractOf("gemm");
  v1::CustomVariant source = Source(c.template_source());
  source.set_compile_timeout_ns(1'000'000);  // 1 ms: NVRTC alone takes longer to start
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<KernelImage> image = BuildKernelImage(source, c, Options());
  EXPECT_EQ(image.status().code(), absl::StatusCode::kDeadlineExceeded) << image.status();
  EXPECT_NE(Message(image.status()).find("compile time limit of 1 ms exceeded"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(NvrtcTest, CubinMustBeAnElfImage) {
  v1::CustomVariant cubin = Source("not an ELF");
  cubin.set_kind(v1::CUBIN);
  absl::StatusOr<KernelImage> image = BuildKernelImage(cubin, ContractOf("vector_add"), Options());
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(image.status()).find("not a cubin"), std::string::npos);
}

TEST_F(NvrtcTest, TargetsFollowTheDevice) {
  EXPECT_EQ(NvrtcTarget(90), "sm_90a");
  EXPECT_EQ(NvrtcTarget(80), "sm_80");
  EXPECT_EQ(NvrtcTarget(89), "sm_89");
  EXPECT_EQ(NvrtcTarget(100), "sm_100a");
  EXPECT_EQ(NvrtcTarget(95), "compute_90");  // unknown to this NVRTC: PTX of the newest one below
}

}  // namespace
}  // namespace kbench::worker
