// The client's side of custom kernels: submit --source and its launch flags become the job's custom
// variant, bad input is refused naming the flag, and kernels --contract prints the contract.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "api/custom_spec.h"
#include "client/commands.h"
#include "client/format_contract.h"
#include "client/job_spec.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

class ClientCustomTest : public ::testing::Test {
 protected:
  ClientCustomTest() : dir_(std::filesystem::temp_directory_path() / ("kbench-client-custom-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~ClientCustomTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  static absl::StatusOr<v1::JobSpec> Build(std::vector<std::string> argv) {
    auto args = ParseArgs(SubmitSpec(), argv);
    if (!args.ok()) return args.status();
    return BuildJobSpec(*args);
  }

  std::filesystem::path dir_;
};

TEST_F(ClientCustomTest, SourceAndLaunchFlagsMakeTheCustomVariant) {
  const std::string path = Write("my_rmsnorm.cu", "__global__ void k() {}");
  auto spec = Build({"--op", "rmsnorm", "--source", path, "--block", "128", "--grid", "rows, 1", "--smem", "1024",
                     "--nvrtc-option", "-DTILE=4", "--compile-timeout-ms", "5000"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->custom_variants_size(), 1);
  const v1::CustomVariant& c = spec->custom_variants(0);
  EXPECT_EQ(c.name(), "my_rmsnorm");
  EXPECT_EQ(c.kind(), v1::CUDA_SOURCE);
  EXPECT_EQ(c.source(), "__global__ void k() {}");
  EXPECT_EQ(c.file_name(), "my_rmsnorm.cu");
  EXPECT_EQ(std::vector<uint32_t>(c.block().begin(), c.block().end()), std::vector<uint32_t>{128});
  EXPECT_EQ(std::vector<std::string>(c.grid().begin(), c.grid().end()), (std::vector<std::string>{"rows", "1"}));
  EXPECT_EQ(c.dynamic_shared_bytes(), 1024);
  EXPECT_EQ(c.compile_options(0), "-DTILE=4");
  EXPECT_EQ(c.compile_timeout_ns(), 5'000'000'000);
  EXPECT_TRUE(spec->variants().empty());  // every built-in variant and the custom one
}

TEST_F(ClientCustomTest, NamedVariantsKeepTheCustomOneBesideThem) {
  const std::string path = Write("add.ptx", ".visible .entry kbench_vector_add()\n{\n ret;\n}\n");
  auto spec = Build({"--op", "vector_add", "--source", path, "--dtype", "f32", "--variant", "cuda_v1", "--name", "tri"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->custom_variants(0).kind(), v1::PTX);  // from the extension
  EXPECT_EQ(spec->custom_variants(0).dtypes(0), v1::DTYPE_F32);
  EXPECT_EQ(std::vector<std::string>(spec->variants().begin(), spec->variants().end()),
            (std::vector<std::string>{"cuda_v1", "custom:tri"}));
}

TEST_F(ClientCustomTest, ArgumentErrorsNameTheFlag) {
  const std::string cu = Write("k.cu", "x");
  const std::string big = Write("big.cu", std::string(api::kMaxCustomSourceBytes + 1, ' '));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--op", "rmsnorm", "--grid", "rows"}, "--grid: only with --source"},
      {{"--op", "rmsnorm", "--source", (dir_ / "missing.cu").string()}, "--source: cannot read"},
      {{"--op", "rmsnorm", "--source", big}, "--source: '" + big + "' is 1048577 bytes; at most 1048576"},
      {{"--op", "rmsnorm", "--source", cu, "--source-kind", "sass"}, "--source-kind: unknown kind 'sass'"},
      {{"--op", "rmsnorm", "--source", cu, "--block", "0"}, "--block: expected X[,Y[,Z]] of positive integers"},
      {{"--op", "rmsnorm", "--source", cu, "--block", "64,64"}, "spec.custom_variants[0].block: more than 1024 threads"},
      {{"--op", "rmsnorm", "--source", cu, "--grid", "rows +"}, "--grid: 'rows +' at"},
      {{"--op", "rmsnorm", "--source", cu, "--source-kind", "cubin", "--dtype", "f32,bf16"}, "--dtype: give exactly one"},
      {{"--op", "rmsnorm", "--source", cu, "--nvrtc-option", "--include-path=/"}, "compile_options[0]"},
      {{"--op", "rmsnorm", "--source", cu, "--compile-timeout-ms", "0"}, "--compile-timeout-ms: must be in"},
      {{"--suite", "default", "--source", cu}, "--source: cannot be combined with --suite"},
  };
  for (const auto& [argv, expected] : cases) {
    auto spec = Build(argv);
    ASSERT_FALSE(spec.ok()) << expected;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(spec.status().message().find(expected), absl::string_view::npos) << spec.status().message();
  }
}

TEST(FormatContract, PrintsSignatureLaunchRulesAndTemplate) {
  v1::OpInfo op;
  op.set_name("vector_add");
  v1::LaunchContract* c = op.mutable_contract();
  c->set_entry("kbench_vector_add");
  for (auto [name, kind, type] : {std::tuple{"x", v1::ContractParam::INPUT, "const kbench_t*"},
                                  {"out", v1::ContractParam::OUTPUT, "kbench_t*"},
                                  {"N", v1::ContractParam::DIM, "long long"}}) {
    v1::ContractParam* p = c->add_params();
    p->set_name(name);
    p->set_kind(kind);
    p->set_c_type(type);
    if (kind != v1::ContractParam::DIM) p->add_dims("N");
  }
  c->add_default_block(256);
  c->add_default_grid("cdiv(N, block_x)");
  c->add_dtypes(v1::DTYPE_F32);
  c->set_notes("Outputs are poisoned.");
  c->set_template_source("extern \"C\" __global__ void kbench_vector_add(...) {}\n");
  const std::string text = FormatContract(op, false);
  EXPECT_NE(text.find("extern \"C\" __global__ void kbench_vector_add(\n      const kbench_t* x,"), std::string::npos) << text;
  EXPECT_NE(text.find("// output [N]"), std::string::npos) << text;
  EXPECT_NE(text.find("long long N)"), std::string::npos) << text;
  EXPECT_NE(text.find("grid:        cdiv(N, block_x)"), std::string::npos) << text;
  EXPECT_NE(text.find("Outputs are poisoned."), std::string::npos);
  EXPECT_NE(text.find("Starting template"), std::string::npos);
  EXPECT_NE(FormatContract(op, true).find("\"entry\": \"kbench_vector_add\""), std::string::npos);
}

}  // namespace
}  // namespace kbench::client
