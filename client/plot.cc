// `kbench-client plot`: fetches the results of jobs and writes their Roofline chart as SVG to a file
// (default roofline.svg) or to stdout (-o -).
#include "client/plot.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "client/plot_svg.h"

namespace kbench::client {
namespace {

constexpr char kDefaultOutput[] = "roofline.svg";

// The shared parser knows only --name flags; -o is the one short flag here.
std::vector<std::string> ExpandShortFlags(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool flags_done = false;
  for (const auto& a : args) {
    if (a == "--") flags_done = true;
    out.push_back(!flags_done && a == "-o" ? "--output" : a);
  }
  return out;
}

// Writes beside the target and renames, so that a failed write never leaves half a chart.
absl::Status WriteFile(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
    f << content;
    f.close();
    if (!f) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& PlotSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "plot";
    s.positional = "JOB_ID...";
    s.summary = "Draw the Roofline chart of jobs' results as SVG: the device's roofs and one point per result.";
    s.flags = {
        {"output", "PATH", "SVG file to write, '-' for stdout (default roofline.svg); -o for short"},
        {"ceiling", "SOURCE", "Roofs from the calibrated (measured) or datasheet ceilings (default calibrated)"},
    };
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);
    s.details =
        "Log-log axes: arithmetic intensity (FLOP/byte) against attained FLOP/s. The memory roof is the\n"
        "device's bandwidth x intensity, the compute roofs its peak for each dtype present, both as the\n"
        "results report them (their roofline block). Each OK result is a point coloured by variant and\n"
        "labelled with its variant and shape; results of several devices get one roof style per device.\n"
        "A device without datasheet ceilings (a CPU, an unknown GPU) keeps its calibrated roofs.\n"
        "Exit status: 0 written; 1 nothing to draw, the service failed or the file cannot be written;\n"
        "2 bad flags.";
    s.examples = {
        "kbench-client plot j-abc123",
        "kbench-client plot j-abc123 j-def456 -o rmsnorm.svg --ceiling datasheet",
        "kbench-client plot j-abc123 -o - > roofline.svg",
    };
    return s;
  }();
  return spec;
}

int RunPlot(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = PlotSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, ExpandShortFlags(argv), io, &args)) return *exit;
  if (args.positional.empty()) return UsageError(io, spec, "needs at least one JOB_ID");
  auto source = ParseCeilingSource(args.Get("ceiling", "calibrated"));
  if (!source.ok()) return UsageError(io, spec, source.status().message());
  const std::string output = args.Get("output", kDefaultOutput);
  if (output.empty()) return UsageError(io, spec, "--output: empty path");
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());
  std::vector<v1::Job> jobs;
  auto results = FetchResults(*conn, args.positional, /*include_samples=*/false, &jobs);
  if (!results.ok()) return CallError(io, "plot", results.status(), conn->options.address);
  for (const auto& j : jobs)
    if (j.state() == v1::QUEUED || j.state() == v1::RUNNING)
      io.err << "note: " << j.job_id() << " is " << api::JobStateName(j.state()) << "; plotting its results so far\n";

  auto chart = RenderRooflineSvg(*results, *source);
  if (!chart.ok()) {
    io.err << kProgram << ": plot: " << chart.status().message() << "\n";
    return kExitFailure;
  }
  for (const auto& note : chart->notes) io.err << "note: " << note << "\n";
  if (output == "-") {
    io.out << chart->svg;
    return kExitOk;
  }
  if (auto s = WriteFile(output, chart->svg); !s.ok()) {
    io.err << kProgram << ": plot: " << s.message() << "\n";
    return kExitFailure;
  }
  io.out << output << ": " << chart->points << (chart->points == 1 ? " result" : " results") << " drawn\n";
  return kExitOk;
}

}  // namespace kbench::client
