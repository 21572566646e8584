// Names used on the command line and in tables for the API's enums, and their parsing.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "kbench/v1/common.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"

namespace kbench::api {

std::string DtypeName(v1::Dtype d);                            // "bf16"
absl::StatusOr<v1::Dtype> ParseDtype(absl::string_view name);   // "bf16" -> DTYPE_BF16
std::string StatusName(v1::ResultStatus s);                    // "OK", "INCORRECT", ...
std::string JobStateName(v1::JobState s);                      // "QUEUED", ...
std::string BackendName(v1::Backend b);                        // "cpu", "cuda"
absl::StatusOr<v1::Backend> ParseBackend(absl::string_view name);
std::string BoundClassName(v1::BoundClass c);                  // "memory", "compute", "latency"
std::string CacheModeName(v1::CacheMode m);                    // "cold", "hot"
absl::StatusOr<v1::CacheMode> ParseCacheMode(absl::string_view name);
std::string StopReasonName(v1::StopReason r);
// "rows=8192,cols=4096 bf16" style label of a problem, dims in order.
std::string ProblemLabel(const v1::Problem& p);
// "8192x4096": just the dims.
std::string ShapeLabel(const v1::Problem& p);
// "8192x32x8x128,gptj": the dims, then the flags, as a --shape argument takes them (api/shape.h).
std::string ShapeArgument(const v1::Problem& p);

}  // namespace kbench::api
