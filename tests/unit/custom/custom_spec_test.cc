// Validation of a job's custom variants: structure (sizes, names, launch syntax, options) and against
// the op (contract present, dtypes, names in the grid).
#include "api/custom_spec.h"

#include "api/validate.h"
#include "gtest/gtest.h"

namespace kbench::api {
namespace {

v1::JobSpec SpecWith(const std::string& source) {
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  v1::CustomVariant* c = spec.add_custom_variants();
  c->set_name("mine");
  c->set_kind(v1::CUDA_SOURCE);
  c->set_source(source);
  return spec;
}

v1::OpInfo Rmsnorm(bool with_contract) {
  v1::OpInfo op;
  op.set_name("rmsnorm");
  op.add_dims("rows");
  op.add_dims("cols");
  op.add_dtypes(v1::DTYPE_F32);
  op.add_dtypes(v1::DTYPE_BF16);
  for (const char* t : {"x", "out"}) {
    auto* ti = op.add_tensors();
    ti->set_name(t);
    ti->add_dims("rows");
    ti->add_dims("cols");
    ti->set_is_output(std::string(t) == "out");
  }
  op.add_variants()->set_name("cuda_v1");
  auto* small = op.add_presets();
  small->set_name("small");
  auto* p = small->add_problems();
  for (auto [n, v] : {std::pair{"rows", 4}, {"cols", 8}}) {
    auto* d = p->add_dims();
    d->set_name(n);
    d->set_value(v);
  }
  if (with_contract) op.mutable_contract()->set_entry("kbench_rmsnorm");
  return op;
}

void ExpectInvalid(const absl::Status& s, const std::string& field_and_words) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(field_and_words), absl::string_view::npos) << s.message();
}

TEST(CustomSpec, AGoodVariantPasses) {
  v1::JobSpec spec = SpecWith("__global__ void k() {}");
  spec.mutable_custom_variants(0)->add_block(128);
  spec.mutable_custom_variants(0)->add_grid("cdiv(rows, 2)");
  spec.mutable_custom_variants(0)->add_compile_options("-DTILE=4");
  spec.mutable_custom_variants(0)->add_compile_options("--use_fast_math");
  EXPECT_TRUE(ValidateSpecStructure(spec).ok()) << ValidateSpecStructure(spec);
  EXPECT_TRUE(ResolveAgainstOp(Rmsnorm(true), 0, &spec).ok()) << ResolveAgainstOp(Rmsnorm(true), 0, &spec);
}

TEST(CustomSpec, OversizedSourceIsRefusedNamingTheField) {
  ExpectInvalid(ValidateSpecStructure(SpecWith(std::string(kMaxCustomSourceBytes + 1, 'x'))),
                "spec.custom_variants[0].source: 1048577 bytes, more than the limit of 1048576");
  EXPECT_TRUE(ValidateSpecStructure(SpecWith(std::string(kMaxCustomSourceBytes, 'x'))).ok());
  // Five sources of 1 MiB: each within its limit, together beyond the job's.
  v1::JobSpec spec = SpecWith(std::string(kMaxCustomSourceBytes, 'x'));
  for (int i = 1; i < 5; ++i) {
    *spec.add_custom_variants() = spec.custom_variants(0);
    spec.mutable_custom_variants(i)->set_name("v" + std::to_string(i));
  }
  ExpectInvalid(ValidateSpecStructure(spec), "spec.custom_variants: sources total more than");
  ExpectInvalid(ValidateSpecStructure(SpecWith("")), "spec.custom_variants[0].source: empty");
}

TEST(CustomSpec, StructureErrorsNameTheirField) {
  struct Case {
    std::function<void(v1::CustomVariant*)> edit;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](auto* c) { c->set_name(""); }, "spec.custom_variants[0].name"},
      {[](auto* c) { c->set_name("a b"); }, "spec.custom_variants[0].name"},
      {[](auto* c) { c->set_entry("not-a-name"); }, "spec.custom_variants[0].entry"},
      {[](auto* c) {
         c->add_block(64);
         c->add_block(32);
       },
       "spec.custom_variants[0].block: more than 1024 threads"},
      {[](auto* c) { c->add_block(0); }, "spec.custom_variants[0].block[0]: must be >= 1"},
      {[](auto* c) { c->add_grid("cdiv(rows"); }, "spec.custom_variants[0].grid[0]"},
      {[](auto* c) { c->set_dynamic_shared_bytes(1 << 20); }, "spec.custom_variants[0].dynamic_shared_bytes"},
      {[](auto* c) { c->add_compile_options("-I/etc"); }, "spec.custom_variants[0].compile_options[0]: '-I/etc' is not allowed"},
      {[](auto* c) { c->add_compile_options("--gpu-architecture=sm_50"); }, "compile_options[0]"},
      {[](auto* c) { c->add_compile_options("-DX=1 -I/etc"); }, "compile_options[0]"},
      {[](auto* c) {
         c->set_kind(v1::PTX);
         c->add_compile_options("-DX");
       },
       "only for CUDA source"},
      {[](auto* c) { c->set_compile_timeout_ns(int64_t{3600} * 1'000'000'000); }, "compile_timeout_ns"},
      {[](auto* c) { c->add_dtypes(v1::DTYPE_UNSPECIFIED); }, "spec.custom_variants[0].dtypes[0]"},
  };
  for (const Case& k : cases) {
    v1::JobSpec spec = SpecWith("x");
    k.edit(spec.mutable_custom_variants(0));
    ExpectInvalid(ValidateSpecStructure(spec), k.expected);
  }
  v1::JobSpec twice = SpecWith("x");
  *twice.add_custom_variants() = twice.custom_variants(0);
  ExpectInvalid(ValidateSpecStructure(twice), "spec.custom_variants[1].name: 'mine' given twice");
}

TEST(CustomSpec, AgainstTheOp) {
  v1::JobSpec spec = SpecWith("x");
  ExpectInvalid(ResolveAgainstOp(Rmsnorm(false), 0, &spec), "spec.custom_variants: op 'rmsnorm' takes no custom kernels");

  spec = SpecWith("x");
  spec.mutable_custom_variants(0)->add_grid("cdiv(N, block_x)");
  ExpectInvalid(ResolveAgainstOp(Rmsnorm(true), 0, &spec),
                "spec.custom_variants[0].grid[0]: unknown name 'N' (known: rows, cols, block_x, block_y, block_z)");

  spec = SpecWith("x");
  spec.mutable_custom_variants(0)->add_dtypes(v1::DTYPE_F16);
  ExpectInvalid(ResolveAgainstOp(Rmsnorm(true), 0, &spec), "spec.custom_variants[0].dtypes[0]: op 'rmsnorm' has no dtype f16");
}

TEST(CustomSpec, VariantsMayNameCustomOnes) {
  v1::JobSpec spec = SpecWith("x");
  spec.add_variants("custom:mine");
  spec.add_variants("cuda_v1");
  EXPECT_TRUE(ResolveAgainstOp(Rmsnorm(true), 0, &spec).ok());
  spec.add_variants("custom:other");
  ExpectInvalid(ResolveAgainstOp(Rmsnorm(true), 0, &spec),
                "spec.variants[2]: 'custom:other' names no custom variant of this job (known: custom:mine)");
}

TEST(CustomSpec, CompileOptionsAllowList) {
  for (const char* ok : {"-DFOO", "-DFOO=3", "--define-macro=BAR=x", "-use_fast_math", "--maxrregcount=64",
                         "--std=c++20", "--ftz=true", "-lineinfo", "--fmad=false"})
    EXPECT_TRUE(IsAllowedCompileOption(ok)) << ok;
  for (const char* bad : {"-I/usr", "--include-path=/x", "--pre-include=/etc/passwd", "-arch=sm_90", "-D", "-D1X",
                          "--maxrregcount=", "--std=c++20 -I/x", "-G", "--ftz=true;-I"})
    EXPECT_FALSE(IsAllowedCompileOption(bad)) << bad;
}

}  // namespace
}  // namespace kbench::api
