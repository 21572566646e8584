// The Roofline chart of `kbench-client plot` as a standalone SVG: log-log axes (arithmetic intensity
// in FLOP/byte against attained FLOP/s), the memory roof (bandwidth x I) and a compute roof per dtype
// from the results' own roofline ceilings, and one point per OK result coloured by variant. A pure
// function of the results (no I/O, no clock), so that the drawing is unit-tested on built messages.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/result.pb.h"

namespace kbench::client {

// Which of a result's ceilings the roofs are drawn from (RooflineCeiling.source).
enum class CeilingSource { kCalibrated, kDatasheet };

// "calibrated" or "datasheet".
absl::StatusOr<CeilingSource> ParseCeilingSource(absl::string_view name);
std::string CeilingSourceName(CeilingSource source);

struct RooflineChart {
  std::string svg;
  int points = 0;                  // Results drawn, one <circle> each.
  std::vector<std::string> notes;  // Results left out and why; devices whose roofs fell back to calibrated.
};

// Draws every OK result that has FLOPs and a positive time. Roofs are per device model: the memory
// roof from the bandwidth and one compute roof per dtype present, each the highest over the results
// of that model (several workers of one model may have calibrated slightly differently). A device
// without the asked source (no datasheet entry for a CPU or an unknown GPU) is drawn with its
// calibrated ceilings and a note says so. FAILED_PRECONDITION when no result can be drawn.
absl::StatusOr<RooflineChart> RenderRooflineSvg(const std::vector<v1::Result>& results, CeilingSource source);

}  // namespace kbench::client
