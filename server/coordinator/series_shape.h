// The shape a history query or a series control names, in the form its series are keyed by.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "kbench/v1/catalog.pb.h"

namespace kbench::server {

// `text` as submit's --shape takes it, flags after commas or spaces ("4x256x512", "M=4 N=256 K=512",
// "64x4x2x128 gptj"), resolved against the op as a submitted shape is (api::ResolveShape: the op's
// order, the derived dims it may leave out filled), as SeriesShape prints a result's problem
// ("4x256x512x64x4"). A text that does not resolve (or no op) comes back with its words joined by
// spaces: it still matches a series stored under that label, such as one of an op no worker lists any
// more ("8192x32x8x128,gptj" -> "8192x32x8x128 gptj").
std::string SeriesShapeOf(const v1::OpInfo* op, absl::string_view text);

}  // namespace kbench::server
