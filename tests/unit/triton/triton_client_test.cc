// The client's side of Triton kernels: `submit --source k.py` makes a TRITON_SOURCE custom variant
// (its launch comes from the file, so the launch flags are refused), the API refuses a Triton source
// with a launch of its own, `workers` shows each device's Triton (and why it is absent), and
// `kernels --template --lang triton` gives, per op, a file whose launch description reads and, where
// Triton is installed, whose kernel compiles for sm_90 (the skeleton of an op without a template
// refuses to compile until it is written).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "api/custom_spec.h"
#include "client/commands.h"
#include "client/format.h"
#include "client/job_spec.h"
#include "client/triton_template.h"
#include "core/registry.h"
#include "worker/custom/contract.h"
#include "worker/triton/launch_description.h"
#include "worker/triton/triton_prepare.h"

namespace kbench::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class TritonClientTest : public ::testing::Test {
 protected:
  TritonClientTest() : dir_(std::filesystem::temp_directory_path() / ("kbench-triton-client-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~TritonClientTest() override { std::filesystem::remove_all(dir_); }
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

TEST_F(TritonClientTest, PySourceIsATritonVariant) {
  const std::string path = Write("my_rmsnorm.py", "kbench_launch = {\"grid\": [\"rows\"]}\n");
  auto spec = Build({"--op", "rmsnorm", "--source", path, "--variant", "triton_rmsnorm", "--compile-timeout-ms", "9000"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->custom_variants_size(), 1);
  const v1::CustomVariant& c = spec->custom_variants(0);
  EXPECT_EQ(c.kind(), v1::TRITON_SOURCE);
  EXPECT_EQ(c.name(), "my_rmsnorm");
  EXPECT_EQ(c.file_name(), "my_rmsnorm.py");
  EXPECT_TRUE(c.dtypes().empty());  // compiled per dtype, like CUDA source
  EXPECT_EQ(c.compile_timeout_ns(), 9'000'000'000);
  EXPECT_EQ(std::vector<std::string>(spec->variants().begin(), spec->variants().end()),
            (std::vector<std::string>{"triton_rmsnorm", "custom:my_rmsnorm"}));
  EXPECT_TRUE(api::ValidateCustomVariants(*spec).ok());

  const std::string other = Write("kernel.txt", "x");
  spec = Build({"--op", "rmsnorm", "--source", other, "--source-kind", "triton"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->custom_variants(0).kind(), v1::TRITON_SOURCE);
}

TEST_F(TritonClientTest, LaunchFlagsAreRefusedForTriton) {
  const std::string path = Write("k.py", "x");
  for (std::vector<std::string> extra : {std::vector<std::string>{"--block", "128"}, {"--grid", "rows"}, {"--smem", "1024"},
                                         {"--entry", "k"}, {"--nvrtc-option", "-DX"}}) {
    std::vector<std::string> argv = {"--op", "rmsnorm", "--source", path};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto spec = Build(argv);
    ASSERT_FALSE(spec.ok()) << extra[0];
    EXPECT_THAT(spec.status().message(), HasSubstr(extra[0] + ": not for a Triton --source"));
  }
  auto spec = Build({"--op", "rmsnorm", "--source", path, "--source-kind", "python"});
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("known: cuda, ptx, cubin, triton"));
  // The API refuses the same, whoever built the job.
  v1::JobSpec job;
  job.set_op("rmsnorm");
  v1::CustomVariant* c = job.add_custom_variants();
  c->set_name("k");
  c->set_kind(v1::TRITON_SOURCE);
  c->set_source("x");
  c->add_grid("rows");
  const absl::Status s = api::ValidateCustomVariants(job);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("spec.custom_variants[0].kind"));
  EXPECT_THAT(s.message(), HasSubstr("kbench_launch"));
}

TEST(TritonWorkers, TheTritonColumnAndWhyItIsAbsent) {
  v1::WorkerStatus w;
  w.mutable_info()->set_worker_id("w-1");
  w.set_state("idle");
  for (const char* triton : {"triton 3.5.1 (python 3.12.3)", "absent: triton cannot be imported: No module named 'triton'"}) {
    auto* d = w.mutable_info()->add_devices();
    d->set_name("NVIDIA H200");
    d->set_index(w.info().devices_size() - 1);
    d->set_triton(triton);
  }
  const std::string out = FormatWorkers({w}, Format::kTable, 0);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 4u);
  EXPECT_THAT(lines[0], HasSubstr("triton"));
  EXPECT_THAT(lines[2], HasSubstr("triton 3.5.1"));
  EXPECT_THAT(lines[2], Not(HasSubstr("python")));
  EXPECT_THAT(lines[3], HasSubstr("absent"));
  EXPECT_THAT(out, HasSubstr("w-1 device 1: triton absent: triton cannot be imported: No module named 'triton'"));
  const std::string csv = FormatWorkers({w}, Format::kCsv, 0);
  EXPECT_THAT(csv, HasSubstr("triton 3.5.1 (python 3.12.3)"));
  EXPECT_THAT(FormatWorkers({w}, Format::kJson, 0), HasSubstr("\"triton\""));
}

v1::OpInfo OpInfoOf(const kernels::OpDef& op) {
  v1::OpInfo info;
  info.set_name(op.name);
  *info.mutable_contract() = *worker::MakeLaunchContract(op);
  return info;
}

TEST(TritonTemplate, EveryOpWithAContractGetsAReadableFile) {
  int ops = 0;
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops()) {
    if (!worker::MakeLaunchContract(op)) continue;
    ++ops;
    SCOPED_TRACE(op.name);
    const std::string text = TritonTemplate(OpInfoOf(op));
    EXPECT_THAT(text, HasSubstr("submit --op " + op.name));
    absl::StatusOr<worker::TritonLaunch> launch = worker::ParseTritonLaunch(text, "t.py");
    ASSERT_TRUE(launch.ok()) << launch.status();
    EXPECT_THAT(text, HasSubstr("def " + launch->kernel + "("));
  }
  EXPECT_GE(ops, 8);
}

TEST(TritonTemplate, TemplatesCompileForSm90) {
  if (!worker::NodeTritonCapability().available)
    GTEST_SKIP() << "Triton is not installed here: " << worker::NodeTritonCapability().reason;
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops()) {
    if (!worker::MakeLaunchContract(op)) continue;
    SCOPED_TRACE(op.name);
    const std::string text = TritonTemplate(OpInfoOf(op));
    kernels::Problem problem = op.presets[0].problems[0];
    problem.dtype = kernels::Dtype::kBF16;
    const worker::TritonPrepared p = worker::PrepareTriton(op, {text, "t.py", "custom:t"}, problem, {.compute_capability = 90});
    const bool written = op.name == "vector_add" || op.name == "rmsnorm" || op.name == "softmax" ||
                         op.name == "layernorm" || op.name == "gemm";
    if (written) {
      EXPECT_EQ(p.status, v1::OK) << p.message;
    } else {
      EXPECT_EQ(p.status, v1::COMPILE_ERROR);
      EXPECT_THAT(p.message, HasSubstr("write the kernel"));
    }
  }
}

}  // namespace
}  // namespace kbench::client
