#include "api/validate.h"

#include "api/job_items.h"
#include "api/shape.h"
#include "gtest/gtest.h"

namespace kbench::api {
namespace {

v1::OpInfo RmsnormInfo() {
  v1::OpInfo op;
  op.set_name("rmsnorm");
  op.add_dims("rows");
  op.add_dims("cols");
  op.add_dtypes(v1::DTYPE_F32);
  op.add_dtypes(v1::DTYPE_BF16);
  op.set_max_dim_value(int64_t{1} << 31);
  auto* x = op.add_tensors();
  x->set_name("x");
  x->add_dims("rows");
  x->add_dims("cols");
  auto* w = op.add_tensors();
  w->set_name("weight");
  w->add_dims("cols");
  auto* out = op.add_tensors();
  out->set_name("out");
  out->add_dims("rows");
  out->add_dims("cols");
  out->set_is_output(true);
  op.add_variants()->set_name("cpu_naive");
  op.add_variants()->set_name("cpu_blocked");
  auto* small = op.add_presets();
  small->set_name("small");
  auto* p = small->add_problems();
  auto* d = p->add_dims();
  d->set_name("rows");
  d->set_value(64);
  d = p->add_dims();
  d->set_name("cols");
  d->set_value(1024);
  return op;
}

v1::JobSpec SpecWithShape(const std::string& shape) {
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  *spec.add_problems()->mutable_shape() = *ParseShape(shape);
  return spec;
}

void ExpectInvalid(const absl::Status& s, absl::string_view field) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(field), absl::string_view::npos) << "expected field '" << field << "' in: " << s;
}

TEST(Validate, StructureNamesTheField) {
  v1::JobSpec spec;
  ExpectInvalid(ValidateSpecStructure(spec), "spec.op");
  ExpectInvalid(ValidateSpecStructure(SpecWithShape("rows=-1,cols=4")), "spec.problems[0].shape.dims[0] (rows)");
  ExpectInvalid(ValidateSpecStructure(SpecWithShape("rows=4,cols=-4")), "spec.problems[0].shape.dims[1] (cols)");
  spec = SpecWithShape("4x4");
  spec.mutable_settings()->set_noise_target(2);
  ExpectInvalid(ValidateSpecStructure(spec), "spec.settings.noise_target");
  spec = SpecWithShape("4x4");
  spec.add_variants("a");
  spec.add_variants("a");
  ExpectInvalid(ValidateSpecStructure(spec), "spec.variants[1]");
  spec = SpecWithShape("4x4");
  spec.add_dtypes(v1::DTYPE_F32);
  spec.add_dtypes(v1::DTYPE_BF16);
  spec.add_dtypes(v1::DTYPE_F32);  // Would run every problem twice in f32 (and 1000 of them, 1000 times).
  ExpectInvalid(ValidateSpecStructure(spec), "spec.dtypes[2]");
  EXPECT_TRUE(ValidateSpecStructure(SpecWithShape("rows=4,cols=4")).ok());
}

TEST(Validate, ResolveNamesPositionalDimsAndReorders) {
  auto op = RmsnormInfo();
  auto spec = SpecWithShape("8x16");
  ASSERT_TRUE(ResolveAgainstOp(op, 0, &spec).ok());
  EXPECT_EQ(spec.problems(0).shape().dims(0).name(), "rows");
  EXPECT_EQ(spec.problems(0).shape().dims(1).value(), 16);
  spec = SpecWithShape("cols=16,rows=8");
  ASSERT_TRUE(ResolveAgainstOp(op, 0, &spec).ok());
  EXPECT_EQ(spec.problems(0).shape().dims(0).name(), "rows");
  EXPECT_EQ(spec.problems(0).shape().dims(0).value(), 8);
}

TEST(Validate, ResolveRejectsUnknowns) {
  auto op = RmsnormInfo();
  auto spec = SpecWithShape("8x16");
  spec.add_variants("cuda_magic");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.variants[0]");
  spec = SpecWithShape("8x16");
  spec.add_dtypes(v1::DTYPE_FP8_E4M3);
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.dtypes[0]");
  spec = SpecWithShape("8x16x2");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.problems[0].shape");
  spec = SpecWithShape("rows=8,depth=3");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.problems[0].shape.dims[1]: unknown dimension 'depth'");
  spec = SpecWithShape("rows=8");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "missing dimension 'cols'");
  spec = SpecWithShape("rows=8,cols=3");
  *spec.mutable_problems(0)->mutable_shape()->add_dims() = spec.problems(0).shape().dims(0);  // not from ParseShape
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.problems[0].shape.dims[2]: dimension 'rows' given twice");
  // 0 passes the structure check (an op may allow it) and is refused against an op that does not.
  spec = SpecWithShape("rows=0,cols=4");
  EXPECT_TRUE(ValidateSpecStructure(spec).ok());
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.problems[0].shape.dims[0] (rows): must be >= 1, got 0");
  spec.clear_problems();
  spec.add_problems()->set_preset("huge");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.problems[0].preset");
  spec = SpecWithShape("8x4294967296");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.problems[0].shape.dims[1] (cols)");
}

// An op like w4a16_gemm: K_words and groups follow from K; and one dim that may be 0.
v1::OpInfo PackedInfo() {
  v1::OpInfo op;
  op.set_name("packed");
  for (const char* d : {"M", "K", "K_words", "groups", "extra"}) op.add_dims(d);
  op.add_dtypes(v1::DTYPE_BF16);
  op.add_variants()->set_name("cpu_naive");
  auto* d = op.add_derived_dims();
  d->set_name("K_words");
  d->set_expr("K / 8");
  d = op.add_derived_dims();
  d->set_name("groups");
  d->set_expr("cdiv(K, 128)");
  op.add_zero_dims("extra");
  return op;
}

std::vector<int64_t> ResolvedValues(const v1::JobSpec& spec) {
  std::vector<int64_t> out;
  for (const auto& d : spec.problems(0).shape().dims()) out.push_back(d.value());
  return out;
}

TEST(Validate, DerivedDimsMayBeLeftOut) {
  const v1::OpInfo op = PackedInfo();
  using V = std::vector<int64_t>;
  // Named, in any order, without the derived dims: they take their expressions' values.
  auto spec = SpecWithShape("extra=0,K=200,M=3");
  ASSERT_TRUE(ResolveAgainstOp(op, 0, &spec).ok());
  EXPECT_EQ(ResolvedValues(spec), (V{3, 200, 25, 2, 0}));
  EXPECT_EQ(spec.problems(0).shape().dims(3).name(), "groups");
  // Positional: every dim, or exactly the ones not derived.
  spec = SpecWithShape("3x4096x1");
  ASSERT_TRUE(ResolveAgainstOp(op, 0, &spec).ok());
  EXPECT_EQ(ResolvedValues(spec), (V{3, 4096, 512, 32, 1}));
  spec = SpecWithShape("3x4096x7x9x1");
  ASSERT_TRUE(ResolveAgainstOp(op, 0, &spec).ok());
  EXPECT_EQ(ResolvedValues(spec), (V{3, 4096, 7, 9, 1}));  // given: kept (the op's own checks judge them)
  spec = SpecWithShape("M=3,K=4096,groups=5,extra=2");
  ASSERT_TRUE(ResolveAgainstOp(op, 0, &spec).ok());
  EXPECT_EQ(ResolvedValues(spec), (V{3, 4096, 512, 5, 2}));
  // Any other count names both forms.
  spec = SpecWithShape("3x4096");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec),
                "op 'packed' has 5 dimensions (M,K,K_words,groups,extra), or 3 without the ones it derives (M,K,extra), "
                "got 2");
  // A non-derived dim is still required, and a derived value below 1 is refused.
  spec = SpecWithShape("M=3,K_words=4,groups=1,extra=0");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "missing dimension 'K'");
  spec = SpecWithShape("M=3,K=4,extra=0");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "derived dimension 'K_words' = K / 8 is 0, must be >= 1");
  // 0 only where the op allows it.
  spec = SpecWithShape("M=0,K=8,extra=0");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "spec.problems[0].shape.dims[0] (M): must be >= 1, got 0");
}

TEST(Validate, ResolveShapeAloneAsASpecsShapeIs) {
  v1::OpInfo op = PackedInfo();
  op.add_flags("fast");
  auto parsed = ParseShape("3x4096x1,fast");
  ASSERT_TRUE(parsed.ok());
  auto r = ResolveShape(op, *parsed);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->dims_size(), 5);
  EXPECT_EQ(r->dims(2).name(), "K_words");
  EXPECT_EQ(r->dims(2).value(), 512);
  EXPECT_EQ(r->dims(3).value(), 32);
  ASSERT_EQ(r->flags_size(), 1);
  EXPECT_EQ(r->flags(0), "fast");
  // Errors name the field given, as a spec's do under spec.problems[i].shape.
  parsed = ParseShape("3x4096x1,slow");
  ASSERT_TRUE(parsed.ok());
  ExpectInvalid(ResolveShape(op, *parsed).status(), "shape.flags: unknown flag 'slow'");
  parsed = ParseShape("0x4096x1");
  ASSERT_TRUE(parsed.ok());
  ExpectInvalid(ResolveShape(op, *parsed, "scope.shape").status(), "scope.shape.dims[0] (M): must be >= 1, got 0");
}

TEST(Validate, ABadDerivedExpressionIsReportedNotEvaluated) {
  v1::OpInfo op = PackedInfo();
  op.mutable_derived_dims(1)->set_expr("cdiv(K, extra)");  // extra may be 0
  auto spec = SpecWithShape("M=3,K=8,extra=0");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "division by zero (give it explicitly)");
  spec = SpecWithShape("M=3,K=8,extra=0,groups=1");
  EXPECT_TRUE(ResolveAgainstOp(op, 0, &spec).ok());
  op.mutable_derived_dims(1)->set_expr("cdiv(K_words, 16)");  // derived from a derived dim: not allowed
  spec = SpecWithShape("M=3,K=8,extra=1");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "unknown name");
  op.mutable_derived_dims(1)->set_expr("cdiv(K,");
  ExpectInvalid(ResolveAgainstOp(op, 0, &spec), "op 'packed': derived dimension 'groups'");
}

TEST(Validate, MemoryLimitAndOverflow) {
  auto op = RmsnormInfo();
  auto spec = SpecWithShape("1024x1024");
  spec.add_dtypes(v1::DTYPE_F32);
  // x and out: 2 * 4 MiB, weight 4 KiB.
  EXPECT_TRUE(ResolveAgainstOp(op, 9 << 20, &spec).ok());
  spec = SpecWithShape("1024x1024");
  spec.add_dtypes(v1::DTYPE_F32);
  ExpectInvalid(ResolveAgainstOp(op, 8 << 20, &spec), "needs 8392704 bytes");
  op.set_max_dim_value(0);
  spec = SpecWithShape("4611686018427387904x4");
  ExpectInvalid(ResolveAgainstOp(op, 1 << 30, &spec), "overflows");
}

TEST(Validate, ExpandPresetsTimesDtypes) {
  auto op = RmsnormInfo();
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  auto problems = ExpandProblems(op, spec);  // default: the small preset, every dtype
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].dtype(), v1::DTYPE_F32);
  EXPECT_EQ(problems[1].dtype(), v1::DTYPE_BF16);
  EXPECT_EQ(problems[0].preset(), "small");
  spec.add_dtypes(v1::DTYPE_BF16);
  auto s = SpecWithShape("rows=2,cols=3");
  s.add_dtypes(v1::DTYPE_BF16);
  ASSERT_TRUE(ResolveAgainstOp(op, 0, &s).ok());
  problems = ExpandProblems(op, s);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].dims(1).value(), 3);
  EXPECT_EQ(SelectVariants(op, s).size(), 2u);
}

// The rule the worker plans by and the coordinator counts by (api/job_items.h): the built-in
// variants in catalog order, then the custom ones, each selected by spec.variants when it names any.
TEST(Validate, PlannedVariantsAreTheLadderThenTheCustomKernels) {
  const auto op = RmsnormInfo();
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  spec.add_custom_variants()->set_name("mine");
  spec.add_custom_variants()->set_name("yours");
  std::vector<PlannedVariant> planned = PlannedVariants(op, spec);
  ASSERT_EQ(planned.size(), 4u);
  EXPECT_EQ(planned[0].name, "cpu_naive");
  EXPECT_EQ(planned[0].custom_index, -1);
  EXPECT_EQ(planned[1].name, "cpu_blocked");
  EXPECT_EQ(planned[2].name, "custom:mine");
  EXPECT_EQ(planned[2].custom_index, 0);
  EXPECT_EQ(planned[3].name, "custom:yours");
  EXPECT_EQ(planned[3].custom_index, 1);
  EXPECT_EQ(PlannedResultCount(op, spec), 2 * 4);  // the small preset in f32 and bf16

  spec.add_variants("custom:yours");
  spec.add_variants("cpu_blocked");
  planned = PlannedVariants(op, spec);
  ASSERT_EQ(planned.size(), 2u);
  EXPECT_EQ(planned[0].name, "cpu_blocked");
  EXPECT_EQ(planned[1].name, "custom:yours");
  EXPECT_EQ(planned[1].custom_index, 1);
  spec.add_dtypes(v1::DTYPE_BF16);
  EXPECT_EQ(PlannedResultCount(op, spec), 1 * 2);
}

// An A/B compare naming no problem (the PR gate) measures the op's "ci" preset; a plain job still
// gets "small", and an op without "ci" (a plugin built before it) gives its "small" to A/B too.
TEST(Validate, AbSpecWithoutProblemsExpandsTheCiPreset) {
  v1::OpInfo op = RmsnormInfo();
  v1::JobSpec ab;
  ab.set_op("rmsnorm");
  ab.add_dtypes(v1::DTYPE_BF16);
  ab.mutable_ab()->set_rounds(2);
  auto problems = ExpandProblems(op, ab);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].preset(), "small");  // no ci preset yet

  auto* ci = op.add_presets();
  ci->set_name(kCiPreset);
  auto* p = ci->add_problems();
  for (auto [name, value] : {std::pair<const char*, int64_t>{"rows", 8192}, {"cols", 4096}}) {
    auto* d = p->add_dims();
    d->set_name(name);
    d->set_value(value);
  }
  problems = ExpandProblems(op, ab);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].preset(), "ci");
  EXPECT_EQ(problems[0].dims(0).value(), 8192);
  EXPECT_EQ(problems[0].dtype(), v1::DTYPE_BF16);

  v1::JobSpec plain = ab;
  plain.clear_ab();
  problems = ExpandProblems(op, plain);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].preset(), "small");

  v1::JobSpec named = ab;
  named.add_problems()->set_preset("small");
  problems = ExpandProblems(op, named);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].preset(), "small");
}

}  // namespace
}  // namespace kbench::api
