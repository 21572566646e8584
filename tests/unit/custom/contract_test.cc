// Launch contracts are generated from the op definitions: every op of the brief has one, its
// parameters are the op's tensors then its dims, and the catalog carries it for CUDA workers only.
#include "worker/custom/contract.h"

#include "core/registry.h"
#include "gtest/gtest.h"
#include "worker/plan/catalog.h"

namespace kbench::worker {
namespace {

TEST(Contract, EveryMemoryBoundOpAndGemmHasOne) {
  for (const char* name : {"vector_add", "silu_mul_bias", "reduce_sum", "rmsnorm", "softmax", "layernorm",
                           "add_rmsnorm", "gemm"}) {
    const kernels::OpDef* op = kernels::BuiltinRegistry().Find(name);
    ASSERT_NE(op, nullptr) << name;
    std::optional<v1::LaunchContract> c = MakeLaunchContract(*op);
    ASSERT_TRUE(c.has_value()) << name;
    EXPECT_EQ(c->entry(), std::string("kbench_") + name);
    ASSERT_EQ(c->params_size(), static_cast<int>(op->tensors.size() + op->dims.size())) << name;
    for (size_t i = 0; i < op->tensors.size(); ++i) {
      const v1::ContractParam& p = c->params(static_cast<int>(i));
      EXPECT_EQ(p.name(), op->tensors[i].name);
      EXPECT_EQ(p.kind(), op->tensors[i].is_output ? v1::ContractParam::OUTPUT : v1::ContractParam::INPUT);
      EXPECT_EQ(p.size_bytes(), 8);
      EXPECT_EQ(std::vector<std::string>(p.dims().begin(), p.dims().end()), op->tensors[i].dims);
    }
    for (size_t i = 0; i < op->dims.size(); ++i) {
      const v1::ContractParam& p = c->params(static_cast<int>(op->tensors.size() + i));
      EXPECT_EQ(p.name(), op->dims[i]);
      EXPECT_EQ(p.kind(), v1::ContractParam::DIM);
      EXPECT_EQ(p.c_type(), "long long");
    }
    EXPECT_EQ(c->default_block_size(), 3);
    EXPECT_EQ(c->default_grid_size(), 3);
    EXPECT_EQ(c->dtypes_size(), static_cast<int>(op->dtypes.size()));
    EXPECT_NE(c->template_source().find("extern \"C\" __global__ void kbench_"), std::string::npos) << name;
    EXPECT_NE(c->notes().find("0xFF"), std::string::npos);
  }
}

TEST(Contract, SignatureQuotesTypes) {
  const auto c = MakeLaunchContract(*kernels::BuiltinRegistry().Find("rmsnorm"));
  EXPECT_EQ(ContractSignature(*c, "kbench_rmsnorm"),
            "void kbench_rmsnorm(const kbench_t* x, const kbench_t* weight, kbench_t* out, long long rows, long long cols)");
  const auto r = MakeLaunchContract(*kernels::BuiltinRegistry().Find("reduce_sum"));
  EXPECT_EQ(ContractSignature(*r, "k"), "void k(const kbench_t* x, float* out, long long N)");
}

TEST(Contract, CatalogCarriesItForCudaWorkersOnly) {
  const Catalog cpu(kernels::BuiltinRegistry(), {kernels::Backend::kCpu});
  ASSERT_NE(cpu.FindInfo("rmsnorm"), nullptr);
  EXPECT_FALSE(cpu.FindInfo("rmsnorm")->has_contract());
  const v1::OpInfo info = ToOpInfo(*kernels::BuiltinRegistry().Find("rmsnorm"), {kernels::Backend::kCuda});
  ASSERT_TRUE(info.has_contract());
  EXPECT_EQ(info.contract().entry(), "kbench_rmsnorm");
}

TEST(Contract, CheckSourceNamesTheEntryAndEveryParameter) {
  const auto c = MakeLaunchContract(*kernels::BuiltinRegistry().Find("vector_add"));
  const std::string check = ContractCheckSource(*c, "my_add");
  EXPECT_NE(check.find("decltype(&my_add)"), std::string::npos);
  EXPECT_NE(check.find("parameter 4 (N) must be a 64-bit integer"), std::string::npos);
  EXPECT_NE(check.find("parameter 3 (out) must be a pointer to kbench_t"), std::string::npos);
}

}  // namespace
}  // namespace kbench::worker
