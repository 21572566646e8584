// `kbench-client plot`: a Roofline chart (SVG) of the results of one or more jobs; the drawing itself
// is in plot_svg.h.
#pragma once

#include <string>
#include <vector>

#include "client/commands.h"

namespace kbench::client {

const CommandSpec& PlotSpec();
int RunPlot(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);

}  // namespace kbench::client
