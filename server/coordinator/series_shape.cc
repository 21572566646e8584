#include "server/coordinator/series_shape.h"

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/shape.h"
#include "api/validate.h"
#include "server/store/result_columns.h"

namespace kbench::server {

std::string SeriesShapeOf(const v1::OpInfo* op, absl::string_view text) {
  // Series shapes put flags after spaces, --shape after commas: either reads as the latter.
  std::vector<absl::string_view> parts = absl::StrSplit(text, absl::ByAnyChar(", "), absl::SkipWhitespace());
  if (op != nullptr) {
    absl::StatusOr<v1::Problem> parsed = api::ParseShape(absl::StrJoin(parts, ","));
    absl::StatusOr<v1::Problem> resolved = parsed.ok() ? api::ResolveShape(*op, *parsed) : parsed.status();
    if (resolved.ok()) return SeriesShape(*resolved);
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace kbench::server
