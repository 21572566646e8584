// Every preset problem of the suite can be sent back as an explicit shape: the label a result prints
// (positional, every dim), its named form, and the short forms that leave out the op's derived dims.
// And the derived dims' expressions are ones the coordinator can evaluate, whose values the op accepts.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/grid_expr.h"
#include "api/validate.h"
#include "core/registry.h"
#include "gtest/gtest.h"
#include "worker/plan/catalog.h"
#include "worker/runner/convert.h"

namespace kbench::worker {
namespace {

std::set<kernels::Backend> AllBackends() { return {kernels::Backend::kCpu, kernels::Backend::kCuda}; }

bool IsDerived(const kernels::OpDef& op, const std::string& dim) {
  return std::any_of(op.derived_dims.begin(), op.derived_dims.end(),
                     [&](const kernels::DerivedDim& d) { return d.name == dim; });
}

// Resolves one explicit shape (named or positional) against the op's catalog entry.
absl::StatusOr<kernels::Problem> Resolve(const v1::OpInfo& info, const v1::Problem& shape) {
  v1::JobSpec spec;
  spec.set_op(info.name());
  *spec.add_problems()->mutable_shape() = shape;
  if (absl::Status s = api::ValidateSpecStructure(spec); !s.ok()) return s;
  if (absl::Status s = api::ResolveAgainstOp(info, 0, &spec); !s.ok()) return s;
  return ToKernelProblem(spec.problems(0).shape());
}

v1::Problem Shape(const kernels::Problem& p, bool named, bool with_derived, const kernels::OpDef& op) {
  v1::Problem out;
  out.set_dtype(ToProtoDtype(p.dtype));
  for (const std::string& f : p.flags) out.add_flags(f);
  for (const auto& [name, value] : p.dims) {
    if (!with_derived && IsDerived(op, name)) continue;
    v1::Dim* d = out.add_dims();
    if (named) d->set_name(name);
    d->set_value(value);
  }
  return out;
}

TEST(SuiteShapes, DerivedDimsAreEvaluableOverTheDimsAShapeGives) {
  int ops_with_derived = 0;
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops()) {
    std::set<std::string> seen;
    for (const kernels::DerivedDim& d : op.derived_dims) {
      SCOPED_TRACE(op.name + "." + d.name);
      EXPECT_NE(std::find(op.dims.begin(), op.dims.end(), d.name), op.dims.end()) << "not one of the op's dims";
      EXPECT_TRUE(seen.insert(d.name).second) << "derived twice";
      absl::StatusOr<api::GridExpr> expr = api::GridExpr::Parse(d.expr);
      ASSERT_TRUE(expr.ok()) << expr.status();
      for (const std::string& name : expr->Names()) {
        EXPECT_NE(std::find(op.dims.begin(), op.dims.end(), name), op.dims.end()) << name;
        EXPECT_FALSE(IsDerived(op, name)) << name << ": a derived dim reads only dims a shape gives";
      }
    }
    for (const std::string& z : op.zero_dims)
      EXPECT_NE(std::find(op.dims.begin(), op.dims.end(), z), op.dims.end()) << op.name << "." << z;
    ops_with_derived += op.derived_dims.empty() ? 0 : 1;
  }
  EXPECT_GE(ops_with_derived, 5);  // w4a16_gemm, fp8_gemm_block, paged_decode, silu_and_mul, ...
}

TEST(SuiteShapes, EveryPresetProblemResolvesAsAnExplicitShape) {
  int problems = 0, short_forms = 0;
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops()) {
    const v1::OpInfo info = ToOpInfo(op, AllBackends());
    for (const kernels::Preset& preset : op.presets) {
      for (const kernels::Problem& p : preset.problems) {
        SCOPED_TRACE(op.name + " " + preset.name + " " + p.label());
        ++problems;
        for (bool named : {true, false}) {
          absl::StatusOr<kernels::Problem> back = Resolve(info, Shape(p, named, true, op));
          ASSERT_TRUE(back.ok()) << (named ? "named: " : "positional: ") << back.status();
          EXPECT_EQ(back->dims, p.dims);
        }
        if (op.derived_dims.empty()) continue;
        // Without the derived dims: the expressions' values, which the op must accept.
        for (bool named : {true, false}) {
          absl::StatusOr<kernels::Problem> back = Resolve(info, Shape(p, named, false, op));
          ASSERT_TRUE(back.ok()) << (named ? "named, short: " : "positional, short: ") << back.status();
          for (size_t j = 0; j < p.dims.size(); ++j)
            if (!IsDerived(op, p.dims[j].first)) EXPECT_EQ(back->dims[j], p.dims[j]);
          back->dtype = p.dtype == kernels::Dtype::kUnspecified ? op.dtypes.front() : p.dtype;
          if (op.validate) EXPECT_EQ(op.validate(*back), "") << back->label();
        }
        ++short_forms;
      }
    }
  }
  EXPECT_GT(problems, 100);
  EXPECT_GT(short_forms, 20);
}

// Where the derived dims are exactly determined, the short form is the preset's own problem.
TEST(SuiteShapes, ShortFormsOfTheQuantGemmsAreTheirFullShapes) {
  for (const char* name : {"w4a16_gemm", "fp8_gemm_block", "silu_and_mul", "silu_mul_fp8_quant"}) {
    const kernels::OpDef* op = kernels::BuiltinRegistry().Find(name);
    ASSERT_NE(op, nullptr) << name;
    const v1::OpInfo info = ToOpInfo(*op, AllBackends());
    for (const kernels::Preset& preset : op->presets)
      for (const kernels::Problem& p : preset.problems) {
        absl::StatusOr<kernels::Problem> back = Resolve(info, Shape(p, true, false, *op));
        ASSERT_TRUE(back.ok()) << back.status();
        EXPECT_EQ(back->dims, p.dims) << name << " " << p.label();
      }
  }
}

}  // namespace
}  // namespace kbench::worker
