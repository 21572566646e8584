// What an ordinary job measures per problem; see job_items.h.
#include "api/job_items.h"

#include <algorithm>

#include "api/custom_spec.h"
#include "api/validate.h"

namespace kbench::api {

std::vector<PlannedVariant> PlannedVariants(const v1::OpInfo& op, const v1::JobSpec& spec) {
  std::vector<PlannedVariant> out;
  for (const v1::VariantInfo* v : SelectVariants(op, spec)) out.push_back(PlannedVariant{v->name(), -1});
  for (int c = 0; c < spec.custom_variants_size(); ++c) {
    std::string name = CustomVariantName(spec.custom_variants(c));
    if (spec.variants().empty() || std::find(spec.variants().begin(), spec.variants().end(), name) != spec.variants().end())
      out.push_back(PlannedVariant{std::move(name), c});
  }
  return out;
}

int64_t PlannedResultCount(const v1::OpInfo& op, const v1::JobSpec& spec) {
  return static_cast<int64_t>(ExpandProblems(op, spec).size()) * static_cast<int64_t>(PlannedVariants(op, spec).size());
}

}  // namespace kbench::api
