// Every limit of a JobSpec that proto/kbench/v1/job.proto promises: a value at the limit is accepted,
// one past it refused INVALID_ARGUMENT naming the field, with a short message. Also NaN, infinities
// and values no enum declares.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "api/validate.h"
#include "gtest/gtest.h"

namespace kbench::api {
namespace {

// A valid spec: rmsnorm on one positional shape.
v1::JobSpec BaseSpec() {
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  v1::Problem* p = spec.add_problems()->mutable_shape();
  p->add_dims()->set_value(64);
  p->add_dims()->set_value(1024);
  return spec;
}

// A field made to hold n bytes or n entries.
struct Limit {
  std::string field;  // Expected in the error message.
  int64_t limit;
  std::function<void(v1::JobSpec*, int64_t n)> fill;
};

std::string Key(int64_t i) { return absl::StrCat("k", i); }

// A valid grid expression of exactly n bytes: "1+1+...+1" (with "11" first when n is even).
std::string SumOfOnes(int64_t n) {
  std::string e = n % 2 == 0 ? "11" : "1";
  while (static_cast<int64_t>(e.size()) < n) e += "+1";
  return e;
}

v1::CustomVariant* Custom(v1::JobSpec* spec) {
  if (spec->custom_variants().empty()) {
    v1::CustomVariant* c = spec->add_custom_variants();
    c->set_name("mine");
    c->set_source("__global__ void k() {}");
  }
  return spec->mutable_custom_variants(0);
}

std::vector<Limit> Limits() {
  return {
      {"spec.op", kMaxNameBytes, [](v1::JobSpec* s, int64_t n) { s->set_op(std::string(n, 'o')); }},
      {"spec.variants", kMaxVariantsPerJob,
       [](v1::JobSpec* s, int64_t n) { for (int64_t i = 0; i < n; ++i) s->add_variants(absl::StrCat("v", i)); }},
      {"spec.variants[0]", kMaxNameBytes, [](v1::JobSpec* s, int64_t n) { s->add_variants(std::string(n, 'v')); }},
      {"spec.problems", kMaxProblemsPerJob,
       [](v1::JobSpec* s, int64_t n) { for (int64_t i = 1; i < n; ++i) *s->add_problems() = s->problems(0); }},
      {"spec.problems[1].preset", kMaxNameBytes,
       [](v1::JobSpec* s, int64_t n) { s->add_problems()->set_preset(std::string(n, 'p')); }},
      {"spec.problems[0].shape.dims", kMaxDimsPerProblem,
       [](v1::JobSpec* s, int64_t n) {
         for (int64_t i = 2; i < n; ++i) s->mutable_problems(0)->mutable_shape()->add_dims()->set_value(1);
       }},
      {"spec.problems[0].shape.dims[0].name", kMaxNameBytes,
       [](v1::JobSpec* s, int64_t n) {
         auto* shape = s->mutable_problems(0)->mutable_shape();
         shape->mutable_dims(0)->set_name(std::string(n, 'd'));
         shape->mutable_dims(1)->set_name("cols");
       }},
      {"spec.problems[0].shape.flags", kMaxFlagsPerProblem,
       [](v1::JobSpec* s, int64_t n) {
         for (int64_t i = 0; i < n; ++i) s->mutable_problems(0)->mutable_shape()->add_flags(absl::StrCat("f", i));
       }},
      {"spec.problems[0].shape.flags[0]", kMaxNameBytes,
       [](v1::JobSpec* s, int64_t n) { s->mutable_problems(0)->mutable_shape()->add_flags(std::string(n, 'f')); }},
      {"spec.selector.model", kMaxNameBytes,
       [](v1::JobSpec* s, int64_t n) { s->mutable_selector()->set_model(std::string(n, 'm')); }},
      {"spec.selector.labels", kMaxLabels,
       [](v1::JobSpec* s, int64_t n) { for (int64_t i = 0; i < n; ++i) (*s->mutable_selector()->mutable_labels())[Key(i)] = "v"; }},
      {"spec.labels", kMaxLabels,
       [](v1::JobSpec* s, int64_t n) { for (int64_t i = 0; i < n; ++i) (*s->mutable_labels())[Key(i)] = "v"; }},
      {"spec.labels[\"kkkk", kMaxLabelKeyBytes,
       [](v1::JobSpec* s, int64_t n) { (*s->mutable_labels())[std::string(n, 'k')] = "v"; }},
      {"spec.labels[\"branch\"]", kMaxLabelValueBytes,
       [](v1::JobSpec* s, int64_t n) { (*s->mutable_labels())["branch"] = std::string(n, 'b'); }},
      {"spec.custom_variants[0].file_name", kMaxCustomFileNameBytes,
       [](v1::JobSpec* s, int64_t n) { Custom(s)->set_file_name(std::string(n, 'f')); }},
      {"spec.custom_variants[0].entry", kMaxCustomFileNameBytes,
       [](v1::JobSpec* s, int64_t n) { Custom(s)->set_entry(std::string(n, 'e')); }},
      {"spec.custom_variants[0].grid[0]", kMaxGridExprBytes,
       [](v1::JobSpec* s, int64_t n) { Custom(s)->add_grid(SumOfOnes(n)); }},
      {"spec.custom_variants[0].compile_options", kMaxCompileOptions,
       [](v1::JobSpec* s, int64_t n) { for (int64_t i = 0; i < n; ++i) Custom(s)->add_compile_options("-lineinfo"); }},
      {"spec.custom_variants[0].compile_options[0]", kMaxCompileOptionBytes,
       [](v1::JobSpec* s, int64_t n) { Custom(s)->add_compile_options("-DX=" + std::string(n - 4, 'x')); }},
      {"spec.custom_variants[0].dtypes", kMaxDtypesPerJob,
       [](v1::JobSpec* s, int64_t n) { for (int64_t i = 0; i < n; ++i) Custom(s)->add_dtypes(v1::DTYPE_F32); }},
      {"spec.ab.pairs", kMaxAbPairs,
       [](v1::JobSpec* s, int64_t n) {
         for (int64_t i = 0; i < n; ++i) {
           v1::VariantPair* p = s->mutable_ab()->add_pairs();
           p->set_base_variant("a");
           p->set_head_variant("b");
         }
       }},
      {"spec.ab.pairs[0].base_variant", kMaxNameBytes,
       [](v1::JobSpec* s, int64_t n) {
         v1::VariantPair* p = s->mutable_ab()->add_pairs();
         p->set_base_variant(std::string(n, 'b'));
         p->set_head_variant("h");
       }},
  };
}

// A dtype may be listed once (each problem runs once per dtype), so the count limit is reached only
// by repeating one: the count is refused first, a repeat next, and every distinct dtype is accepted.
TEST(SpecLimits, DtypesAreBoundedByCountAndByBeingDistinct) {
  v1::JobSpec over = BaseSpec();
  for (int i = 0; i <= kMaxDtypesPerJob; ++i) over.add_dtypes(v1::DTYPE_F32);
  absl::Status refused = ValidateSpecStructure(over);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_TRUE(absl::StartsWith(refused.message(), "spec.dtypes:")) << refused.message();
  v1::JobSpec twice = BaseSpec();
  twice.add_dtypes(v1::DTYPE_BF16);
  twice.add_dtypes(v1::DTYPE_BF16);
  EXPECT_EQ(ValidateSpecStructure(twice).message(), "spec.dtypes[1]: given twice");
  v1::JobSpec all = BaseSpec();
  for (int d = v1::Dtype_MIN + 1; d <= v1::Dtype_MAX; ++d) all.add_dtypes(static_cast<v1::Dtype>(d));
  ASSERT_LT(all.dtypes_size(), kMaxDtypesPerJob);
  EXPECT_TRUE(ValidateSpecStructure(all).ok()) << ValidateSpecStructure(all);
}

TEST(SpecLimits, EachLimitAcceptsItsValueAndRefusesOneMore) {
  for (const Limit& l : Limits()) {
    SCOPED_TRACE(l.field);
    v1::JobSpec at = BaseSpec();
    l.fill(&at, l.limit);
    absl::Status ok = ValidateSpecStructure(at);
    EXPECT_TRUE(ok.ok()) << ok;
    v1::JobSpec over = BaseSpec();
    l.fill(&over, l.limit + 1);
    absl::Status refused = ValidateSpecStructure(over);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
    EXPECT_TRUE(absl::StartsWith(refused.message(), l.field)) << refused.message();
    EXPECT_LT(refused.message().size(), 400u) << refused.message();
  }
}

TEST(SpecLimits, A10MegabyteLabelGetsAShortMessageNamingIt) {
  v1::JobSpec spec = BaseSpec();
  (*spec.mutable_labels())["k"] = std::string(10 << 20, 'x');
  absl::Status s = ValidateSpecStructure(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.labels[\"k\"]: value '" + std::string(kMaxQuoteBytes, 'x') +
                             "...' (10485760 bytes) is more than the limit of 256 bytes");
}

TEST(SpecLimits, A10MegabyteOpNameGetsAShortMessage) {
  v1::JobSpec spec = BaseSpec();
  spec.set_op(std::string(10 << 20, 'o'));
  absl::Status s = ValidateSpecStructure(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "spec.op: 'oooo")) << s.message().substr(0, 100);
  EXPECT_LT(s.message().size(), 200u);
}

TEST(SpecLimits, AnEmptyLabelKeyIsRefused) {
  v1::JobSpec spec = BaseSpec();
  (*spec.mutable_labels())[""] = "v";
  absl::Status s = ValidateSpecStructure(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "spec.labels[\"\"]: empty label key")) << s.message();
}

TEST(SpecNumbers, NoiseTargetMustBeAFiniteFraction) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                     -0.1, 1.0}) {
    v1::JobSpec spec = BaseSpec();
    spec.mutable_settings()->set_noise_target(bad);
    absl::Status s = ValidateSpecStructure(spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StartsWith(s.message(), "spec.settings.noise_target: ")) << s.message();
  }
  v1::JobSpec spec = BaseSpec();
  spec.mutable_settings()->set_noise_target(0.999);
  EXPECT_TRUE(ValidateSpecStructure(spec).ok());
}

TEST(SpecNumbers, NegativeTimesAndCountsAreRefused) {
  struct Case {
    std::string field;
    std::function<void(v1::MeasurementSettings*)> set;
  };
  for (const Case& c : std::vector<Case>{
           {"spec.settings.warmup_ns", [](auto* s) { s->set_warmup_ns(-1); }},
           {"spec.settings.max_time_ns", [](auto* s) { s->set_max_time_ns(kMaxTimePerProblemNs + 1); }},
           {"spec.settings.timeout_ns", [](auto* s) { s->set_timeout_ns(-5); }},
           {"spec.settings.min_samples", [](auto* s) { s->set_min_samples(-1); }},
           {"spec.settings.max_samples", [](auto* s) { s->set_max_samples(kMaxSamples + 1); }},
           {"spec.settings.correctness_trials", [](auto* s) { s->set_correctness_trials(kMaxCorrectnessTrials + 1); }},
           {"spec.settings.hot_batch", [](auto* s) { s->set_hot_batch(-1); }},
       }) {
    v1::JobSpec spec = BaseSpec();
    c.set(spec.mutable_settings());
    absl::Status s = ValidateSpecStructure(spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StartsWith(s.message(), c.field)) << s.message();
  }
}

TEST(SpecEnums, ValuesNoEnumDeclaresAreRefusedByField) {
  struct Case {
    std::string field;
    std::function<void(v1::JobSpec*)> set;
  };
  for (const Case& c : std::vector<Case>{
           {"spec.settings.cache_mode", [](v1::JobSpec* s) { s->mutable_settings()->set_cache_mode(static_cast<v1::CacheMode>(7)); }},
           {"spec.dtypes[0]", [](v1::JobSpec* s) { s->add_dtypes(static_cast<v1::Dtype>(99)); }},
           {"spec.problems[0].shape.dtype",
            [](v1::JobSpec* s) { s->mutable_problems(0)->mutable_shape()->set_dtype(static_cast<v1::Dtype>(42)); }},
           {"spec.selector.backend", [](v1::JobSpec* s) { s->mutable_selector()->set_backend(static_cast<v1::Backend>(9)); }},
           {"spec.custom_variants[0].dtypes[0]", [](v1::JobSpec* s) { Custom(s)->add_dtypes(static_cast<v1::Dtype>(-3)); }},
           {"spec.custom_variants[0].kind",
            [](v1::JobSpec* s) { Custom(s)->set_kind(static_cast<v1::CustomSourceKind>(12)); }},
       }) {
    v1::JobSpec spec = BaseSpec();
    c.set(&spec);
    absl::Status s = ValidateSpecStructure(spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StartsWith(s.message(), c.field)) << s.message();
    EXPECT_TRUE(absl::StrContains(s.message(), "unknown")) << s.message();
  }
  // Every declared cache mode passes.
  for (v1::CacheMode m : {v1::CACHE_MODE_UNSPECIFIED, v1::COLD, v1::HOT}) {
    v1::JobSpec spec = BaseSpec();
    spec.mutable_settings()->set_cache_mode(m);
    EXPECT_TRUE(ValidateSpecStructure(spec).ok()) << m;
  }
}

TEST(SpecQuoting, UserValuesInMessagesAreShortAndEscaped) {
  v1::JobSpec spec = BaseSpec();
  spec.add_variants("a\x1b[2Jb");
  spec.add_variants("a\x1b[2Jb");
  absl::Status s = ValidateSpecStructure(spec);
  EXPECT_EQ(s.message(), "spec.variants[1]: variant 'a\\x1b[2Jb' given twice");
}

}  // namespace
}  // namespace kbench::api
