// The Roofline chart as SVG; see plot_svg.h. Layout: title and subtitle on top, the log-log plot on
// the left (grid and ticks per decade, minor ticks at 2..9), the legend (variants, then the roofs of
// each device) in a column on the right.
#include "client/plot_svg.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "client/plot_svg_canvas.h"
#include "client/units.h"

namespace kbench::client {
namespace {

using namespace svg;  // NOLINT: the drawing primitives (plot_svg_canvas.h), internal to this chart

const v1::RooflineCeiling* FindCeiling(const v1::Result& r, absl::string_view source) {
  for (const auto& c : r.roofline().ceilings())
    if (c.source() == source) return &c;
  return nullptr;
}

struct Point {
  double x = 0, y = 0;  // FLOP/byte, FLOP/s.
  size_t variant = 0;   // Index into the variant order (colour).
  std::string dtype;
  std::string label;    // Drawn beside the point: variant and shape (and dtype when there are several).
  std::string tooltip;  // <title>: everything about it.
};

struct DeviceRoofs {
  std::string name;
  std::string source;                   // The source actually drawn.
  double bandwidth = 0;                 // bytes/s; 0: unknown.
  std::map<std::string, double> peaks;  // FLOP/s by dtype name.
};



// The memory roof of each device (up to its highest ridge) and a compute roof per dtype (from its
// ridge to the right edge), clipped to the plot, with their labels.
// Returns the boxes its labels take, for the points' labels to keep clear of.
std::vector<Box> Roofs(const Canvas& c, const std::vector<DeviceRoofs>& devices, bool name_devices, std::string& svg) {
  std::vector<Box> boxes;
  absl::StrAppend(&svg, "<g class=\"roofs\" fill=\"none\" stroke=\"#3a3a3a\" stroke-width=\"2\">\n");
  std::string labels;
  std::vector<double> right_labels;  // Baselines of the compute roofs' labels, at the right edge.
  for (size_t d = 0; d < devices.size(); ++d) {
    const DeviceRoofs& dev = devices[d];
    const std::string dash = kDashes[d % std::size(kDashes)];
    const std::string dash_attr = dash.empty() ? "" : absl::StrCat(" stroke-dasharray=\"", dash, "\"");
    const std::string prefix = name_devices ? absl::StrCat(dev.name, ": ") : "";
    double top_ridge = 0;
    for (const auto& [dtype, peak] : dev.peaks) top_ridge = std::max(top_ridge, dev.bandwidth > 0 ? peak / dev.bandwidth : 0);
    if (dev.bandwidth > 0) {
      // From where bandwidth x I enters the plot (left edge or bottom) to the highest ridge (or an edge).
      double x0 = c.xmin();
      if (dev.bandwidth * x0 < c.ymin()) x0 = c.ymin() / dev.bandwidth;
      double x1 = std::min({c.xmax(), c.ymax() / dev.bandwidth, top_ridge > 0 ? top_ridge : c.xmax()});
      if (x0 < x1) {
        absl::StrAppend(&svg, "<polyline class=\"roof-memory\"", dash_attr, " points=\"", Num(c.X(x0)), ",",
                        Num(c.Y(dev.bandwidth * x0)), " ", Num(c.X(x1)), ",", Num(c.Y(dev.bandwidth * x1)),
                        "\"/>\n");
        // The label runs along the slope, a little way in from where the roof enters.
        const double sx0 = c.X(x0), sy0 = c.Y(dev.bandwidth * x0), sx1 = c.X(x1), sy1 = c.Y(dev.bandwidth * x1);
        const double angle = std::atan2(sy1 - sy0, sx1 - sx0) * 180 / std::numbers::pi;
        const double t = 0.12;
        const double lx = sx0 + t * (sx1 - sx0), ly = sy0 + t * (sy1 - sy0) - 6;
        const std::string text =
            absl::StrCat(prefix, dev.source == "datasheet" ? "memory " : "copy ", Si(dev.bandwidth, "B/s"));
        absl::StrAppend(&labels, "<text class=\"roof-label\" x=\"", Num(lx), "\" y=\"", Num(ly), "\" transform=\"rotate(",
                        Num(angle), " ", Num(lx), " ", Num(ly), ")\">", Escape(text), "</text>\n");
        // The rotated text as a chain of small boxes along its baseline, on the side above it.
        const double len = kRoofCharWidth * static_cast<double>(text.size()), rad = angle * std::numbers::pi / 180;
        const double ux = std::cos(rad), uy = std::sin(rad), nx = uy, ny = -ux;  // Along, and up from, the text.
        for (double k = 0; k <= len; k += 6) {
          const double cx = lx + k * ux + 5 * nx, cy = ly + k * uy + 5 * ny;
          boxes.push_back({cx - 5, cy - 5, cx + 5, cy + 5});
        }
      }
    }
    for (const auto& [dtype, peak] : dev.peaks) {
      const double ridge = dev.bandwidth > 0 ? peak / dev.bandwidth : 0;
      const double x0 = std::clamp(ridge, c.xmin(), c.xmax());
      absl::StrAppend(&svg, "<polyline class=\"roof-compute\"", dash_attr, " points=\"", Num(c.X(x0)), ",",
                      Num(c.Y(peak)), " ", Num(c.right()), ",", Num(c.Y(peak)), "\"/>\n");
      // Above the line; below it when another roof's label already sits there (peaks close together).
      double ly = c.Y(peak) - 5;
      auto clashes = [&](double y) {
        return std::any_of(right_labels.begin(), right_labels.end(), [y](double u) { return std::fabs(u - y) < 12; });
      };
      if (clashes(ly)) ly = c.Y(peak) + 14;
      for (int k = 0; clashes(ly) && k < 8; ++k) ly += 12;
      right_labels.push_back(ly);
      const std::string text = absl::StrCat(prefix, dtype, " peak ", Si(peak, "FLOP/s"));
      absl::StrAppend(&labels, "<text class=\"roof-label\" x=\"", Num(c.right() - 4), "\" y=\"", Num(ly),
                      "\" text-anchor=\"end\">", Escape(text), "</text>\n");
      boxes.push_back({c.right() - 4 - kRoofCharWidth * static_cast<double>(text.size()), ly - 10, c.right() - 4, ly + 2});
    }
  }
  absl::StrAppend(&svg, "</g>\n<g font-size=\"11\" fill=\"#3a3a3a\">\n", labels, "</g>\n");
  return boxes;
}

// Points, then their labels where a label fits without overlapping another or leaving the plot.
int PointsAndLabels(const Canvas& c, const std::vector<Point>& points, std::vector<Box> taken, std::string& svg) {
  absl::StrAppend(&svg, "<g class=\"points\" stroke=\"#ffffff\" stroke-width=\"1\">\n");
  for (const Point& p : points) {
    const double x = c.X(p.x), y = c.Y(p.y);
    absl::StrAppend(&svg, "<circle cx=\"", Num(x), "\" cy=\"", Num(y), "\" r=\"5\" fill=\"", Colour(p.variant),
                    "\"><title>", Escape(p.tooltip), "</title></circle>\n");
    taken.push_back({x - 5, y - 5, x + 5, y + 5});
  }
  absl::StrAppend(&svg, "</g>\n<g class=\"point-labels\" font-size=\"10\" fill=\"#222\">\n");
  const Box plot{c.left(), c.top(), c.right(), c.bottom()};
  int omitted = 0;
  for (const Point& p : points) {
    const double x = c.X(p.x), y = c.Y(p.y), w = kCharWidth * static_cast<double>(p.label.size()), h = 11;
    struct Candidate {
      double tx, ty;
      const char* anchor;
      Box box;
    };
    const Candidate candidates[] = {
        {x + 8, y + 3.5, "start", {x + 8, y - 6, x + 8 + w, y + 5}},
        {x - 8, y + 3.5, "end", {x - 8 - w, y - 6, x - 8, y + 5}},
        {x, y - 9, "middle", {x - w / 2, y - 9 - h + 2, x + w / 2, y - 7}},
        {x, y + 16, "middle", {x - w / 2, y + 7, x + w / 2, y + 7 + h}},
        {x + 6, y - 8, "start", {x + 6, y - 8 - h + 2, x + 6 + w, y - 6}},
        {x + 6, y + 15, "start", {x + 6, y + 6, x + 6 + w, y + 6 + h}},
        {x - 6, y - 8, "end", {x - 6 - w, y - 8 - h + 2, x - 6, y - 6}},
        {x - 6, y + 15, "end", {x - 6 - w, y + 6, x - 6, y + 6 + h}},
    };
    bool placed = false;
    for (const Candidate& k : candidates) {
      if (k.box.x0 < plot.x0 || k.box.x1 > plot.x1 || k.box.y0 < plot.y0 || k.box.y1 > plot.y1) continue;
      if (std::any_of(taken.begin(), taken.end(), [&](const Box& b) { return b.Overlaps(k.box); })) continue;
      absl::StrAppend(&svg, "<text x=\"", Num(k.tx), "\" y=\"", Num(k.ty), "\" text-anchor=\"", k.anchor, "\">",
                      Escape(p.label), "</text>\n");
      taken.push_back(k.box);
      placed = true;
      break;
    }
    if (!placed) ++omitted;
  }
  absl::StrAppend(&svg, "</g>\n");
  return omitted;
}

void Legend(const std::vector<std::string>& variants, const std::vector<DeviceRoofs>& devices, const std::string& wanted,
            std::string& svg) {
  const double x = kWidth - kLegendWidth + 24;
  double y = kPlotTop + 4;
  absl::StrAppend(&svg, "<g class=\"legend\" font-size=\"11\" fill=\"#222\">\n");
  absl::StrAppend(&svg, "<text x=\"", Num(x), "\" y=\"", Num(y), "\" font-weight=\"bold\">Variants</text>\n");
  for (size_t i = 0; i < variants.size(); ++i) {
    y += kLegendRow;
    absl::StrAppend(&svg, "<rect x=\"", Num(x), "\" y=\"", Num(y - 9), "\" width=\"10\" height=\"10\" rx=\"5\" fill=\"",
                    Colour(i), "\"/><text x=\"", Num(x + 16), "\" y=\"", Num(y), "\">",
                    Escape(Cut(variants[i], kMaxLegendChars)), "</text>\n");
  }
  y += kLegendRow * 1.5;
  absl::StrAppend(&svg, "<text x=\"", Num(x), "\" y=\"", Num(y), "\" font-weight=\"bold\">Roofs</text>\n");
  for (size_t d = 0; d < devices.size(); ++d) {
    y += kLegendRow;
    const std::string dash = kDashes[d % std::size(kDashes)];
    absl::StrAppend(&svg, "<line x1=\"", Num(x), "\" y1=\"", Num(y - 4), "\" x2=\"", Num(x + 22), "\" y2=\"", Num(y - 4),
                    "\" stroke=\"#3a3a3a\" stroke-width=\"2\"", dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"",
                    "/><text x=\"", Num(x + 28), "\" y=\"", Num(y), "\">",
                    Escape(Cut(devices[d].source == wanted ? devices[d].name
                                                          : absl::StrCat(devices[d].name, " (", devices[d].source, ")"),
                               kMaxLegendChars - 4)),
                    "</text>\n");
  }
  absl::StrAppend(&svg, "</g>\n");
}

}  // namespace

absl::StatusOr<CeilingSource> ParseCeilingSource(absl::string_view name) {
  if (name == "calibrated") return CeilingSource::kCalibrated;
  if (name == "datasheet") return CeilingSource::kDatasheet;
  return absl::InvalidArgumentError(absl::StrCat("--ceiling: '", name, "' is not calibrated or datasheet"));
}

std::string CeilingSourceName(CeilingSource source) {
  return source == CeilingSource::kDatasheet ? "datasheet" : "calibrated";
}

absl::StatusOr<RooflineChart> RenderRooflineSvg(const std::vector<v1::Result>& results, CeilingSource source) {
  RooflineChart chart;
  const std::string wanted = CeilingSourceName(source);
  auto device_name = [](const v1::Result& r) { return r.device().name().empty() ? "unknown device" : r.device().name(); };

  // Which devices have the wanted ceilings at all; the others fall back to calibrated.
  std::set<std::string> has_wanted;
  for (const auto& r : results)
    if (r.status() == v1::OK && FindCeiling(r, wanted) != nullptr) has_wanted.insert(device_name(r));

  std::vector<Point> points;
  std::vector<std::string> variants;  // In order of first appearance: colours are stable for a given input.
  std::vector<DeviceRoofs> devices;
  std::set<std::string> ops, dtypes;
  std::map<std::string, int> not_ok;
  for (const auto& r : results) {
    if (r.status() != v1::OK) {
      ++not_ok[api::StatusName(r.status())];
      continue;
    }
    const auto& rf = r.roofline();
    const std::string what =
        absl::StrCat(r.op(), " ", r.variant(), " ", api::ShapeLabel(r.problem()), " ", api::DtypeName(r.problem().dtype()));
    const double intensity = rf.arithmetic_intensity() > 0 ? rf.arithmetic_intensity()
                             : rf.bytes() > 0              ? rf.flops() / rf.bytes()
                                                           : 0;
    double flops_per_second = rf.achieved_flops_per_second();
    if (flops_per_second <= 0 && r.timing().median_ns() > 0) flops_per_second = rf.flops() / (r.timing().median_ns() * 1e-9);
    if (!(intensity > 0) || !(flops_per_second > 0) || !std::isfinite(intensity) || !std::isfinite(flops_per_second)) {
      chart.notes.push_back(absl::StrCat(r.job_id(), " ", what, ": no FLOPs or no time, not drawn"));
      continue;
    }
    const std::string dev_name = device_name(r);
    auto dev = std::find_if(devices.begin(), devices.end(), [&](const DeviceRoofs& d) { return d.name == dev_name; });
    if (dev == devices.end()) {
      devices.push_back({dev_name, has_wanted.count(dev_name) ? wanted : "calibrated", 0, {}});
      dev = devices.end() - 1;
    }
    const std::string dtype = api::DtypeName(r.problem().dtype());
    if (const auto* ceiling = FindCeiling(r, dev->source); ceiling != nullptr) {
      dev->bandwidth = std::max(dev->bandwidth, ceiling->bandwidth_bytes_per_second());
      if (ceiling->peak_flops_per_second() > 0)
        dev->peaks[dtype] = std::max(dev->peaks[dtype], ceiling->peak_flops_per_second());
    }
    auto v = std::find(variants.begin(), variants.end(), r.variant());
    if (v == variants.end()) v = variants.insert(variants.end(), r.variant());
    ops.insert(r.op());
    dtypes.insert(dtype);
    Point p;
    p.x = intensity;
    p.y = flops_per_second;
    p.variant = static_cast<size_t>(v - variants.begin());
    p.dtype = dtype;
    p.label = absl::StrCat(r.variant(), " ", api::ShapeLabel(r.problem()));
    const auto* cal = FindCeiling(r, dev->source);
    p.tooltip = absl::StrCat(what, " on ", dev_name, ": ", Si(flops_per_second, "FLOP/s"), ", ",
                             Si(rf.achieved_bytes_per_second(), "B/s"), " at ", FormatSig(intensity), " FLOP/byte",
                             cal != nullptr ? absl::StrCat(", utilization ", FormatPercent(cal->utilization())) : "",
                             " (", api::BoundClassName(rf.bound_class()), ", job ", r.job_id(), ")");
    points.push_back(std::move(p));
  }
  if (!not_ok.empty()) {
    std::vector<std::string> parts;
    for (const auto& [status, n] : not_ok) parts.push_back(absl::StrCat(n, " ", status));
    chart.notes.push_back(absl::StrCat("results that are not OK are not drawn: ", absl::StrJoin(parts, ", ")));
  }
  for (const auto& d : devices)
    if (d.source != wanted)
      chart.notes.push_back(absl::StrCat(d.name, ": no ", wanted, " ceilings (model not in the datasheet table); ",
                                         "its roofs are the calibrated ones"));
  if (points.empty())
    return absl::FailedPreconditionError(
        results.empty() ? "no results to plot" : "no OK result with FLOPs and a time to plot");
  // With several dtypes, which compute roof a point sits under is part of its label.
  if (dtypes.size() > 1)
    for (auto& p : points) absl::StrAppend(&p.label, " ", p.dtype);

  // Ranges: every point, ridge and peak, whole decades.
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
  for (const auto& p : points) {
    xmin = std::min(xmin, p.x), xmax = std::max(xmax, p.x);
    ymin = std::min(ymin, p.y), ymax = std::max(ymax, p.y);
  }
  for (const auto& d : devices) {
    for (const auto& [dtype, peak] : d.peaks) {
      ymax = std::max(ymax, peak);
      if (d.bandwidth > 0) xmin = std::min(xmin, peak / d.bandwidth), xmax = std::max(xmax, peak / d.bandwidth);
    }
  }
  const double legend_rows = static_cast<double>(variants.size() + devices.size()) + 3.5;
  const double height = std::max(kMinHeight, kPlotTop + legend_rows * kLegendRow + 20);
  const Canvas c(LogRange(xmin, xmax, 3), LogRange(ymin, ymax, 3), height);

  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  const std::string title =
      absl::StrCat("Roofline — ", names.size() <= 2 ? absl::StrJoin(names, ", ") : absl::StrCat(names.size(), " devices"));
  const std::string subtitle =
      absl::StrCat(absl::StrJoin(ops, ", "), " · ", wanted, " ceilings · ", points.size(),
                   points.size() == 1 ? " result" : " results");

  std::string& svg = chart.svg;
  absl::StrAppend(&svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" viewBox=\"0 0 ", Num(kWidth), " ",
                  Num(height), "\" width=\"", Num(kWidth), "\" height=\"", Num(height),
                  "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n");
  absl::StrAppend(&svg, "<title>", Escape(title), "</title>\n");
  absl::StrAppend(&svg, "<rect x=\"0\" y=\"0\" width=\"", Num(kWidth), "\" height=\"", Num(height),
                  "\" fill=\"#ffffff\"/>\n");
  absl::StrAppend(&svg, "<text x=\"", Num(kPlotLeft), "\" y=\"30\" font-size=\"18\" font-weight=\"bold\">",
                  Escape(title), "</text>\n");
  absl::StrAppend(&svg, "<text x=\"", Num(kPlotLeft), "\" y=\"52\" font-size=\"12\" fill=\"#555\">", Escape(subtitle),
                  "</text>\n");
  Axes(c, svg);
  std::vector<Box> roof_labels = Roofs(c, devices, devices.size() > 1, svg);
  const int omitted = PointsAndLabels(c, points, std::move(roof_labels), svg);
  Legend(variants, devices, wanted, svg);
  if (omitted > 0)
    absl::StrAppend(&svg, "<text x=\"", Num(kWidth - 12), "\" y=\"", Num(height - 10),
                    "\" text-anchor=\"end\" font-size=\"10\" fill=\"#777\">", omitted,
                    omitted == 1 ? " label" : " labels", " left out where points crowd (hover a point for its details)",
                    "</text>\n");
  absl::StrAppend(&svg, "</svg>\n");
  chart.points = static_cast<int>(points.size());
  return chart;
}

}  // namespace kbench::client
