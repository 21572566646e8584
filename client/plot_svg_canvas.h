// The drawing primitives of the Roofline SVG (plot_svg.cc): layout constants, text helpers, colours,
// the log-log canvas and its axes. Internal to the client's plot.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace kbench::client::svg {

inline constexpr double kWidth = 960;
inline constexpr double kMinHeight = 600;
inline constexpr double kPlotLeft = 92;
inline constexpr double kPlotTop = 72;
inline constexpr double kLegendWidth = 250;
inline constexpr double kBottomMargin = 66;
inline constexpr double kLegendRow = 18;
inline constexpr double kCharWidth = 6.0;      // Average advance of a 10 px sans-serif character, for label boxes.
inline constexpr double kRoofCharWidth = 6.6;  // The same at 11 px.
inline constexpr size_t kMaxLegendChars = 32;

// Tableau 10: distinct, readable on white, kind to the colour-blind.
inline constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
// Line styles of the roofs of the first, second, ... device.
inline constexpr const char* kDashes[] = {"", "9 4", "2 3", "12 4 2 4"};

// A number for an SVG attribute: one decimal.
std::string Num(double v);
// Text made safe for XML (control characters dropped).
std::string Escape(absl::string_view s);
// s cut to max characters, ending in "..." when cut.
std::string Cut(const std::string& s, size_t max);
// The i-th variant's colour: the palette, then further hues by the golden angle.
std::string Colour(size_t i);
// 3.35e12, "B/s" -> "3.35 TB/s".
std::string Si(double v, absl::string_view unit);
// The tick label of 10^e: plain decimals for intensities, SI prefixes for FLOP/s.
std::string DecadeLabel(int e, bool si);
// The axis range in log10 units: [min, max] with some air, ending on whole or half decades (a chart
// that ends at 1.2 P does not need the empty decade up to 10 P), at least `min_decades` wide.
std::pair<double, double> LogRange(double min, double max, double min_decades);

struct Box {
  double x0, y0, x1, y1;
  bool Overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

class Canvas {
 public:
  Canvas(std::pair<double, double> x, std::pair<double, double> y, double height)
      : xlo_(x.first), xhi_(x.second), ylo_(y.first), yhi_(y.second), height_(height) {}

  double left() const { return kPlotLeft; }
  double right() const { return kWidth - kLegendWidth; }
  double top() const { return kPlotTop; }
  double bottom() const { return height_ - kBottomMargin; }
  double X(double x) const { return left() + (std::log10(x) - xlo_) / (xhi_ - xlo_) * (right() - left()); }
  double Y(double y) const { return bottom() - (std::log10(y) - ylo_) / (yhi_ - ylo_) * (bottom() - top()); }
  double xmin() const { return std::pow(10.0, xlo_); }
  double xmax() const { return std::pow(10.0, xhi_); }
  double ymin() const { return std::pow(10.0, ylo_); }
  double ymax() const { return std::pow(10.0, yhi_); }
  // The whole decades inside each range: where the ticks and labels go.
  std::vector<int> XDecades() const { return Decades(xlo_, xhi_); }
  std::vector<int> YDecades() const { return Decades(ylo_, yhi_); }
  // Minor ticks: 2..9 x 10^e inside each range.
  std::vector<double> XMinor() const { return Minor(xlo_, xhi_); }
  std::vector<double> YMinor() const { return Minor(ylo_, yhi_); }

 private:
  static std::vector<int> Decades(double lo, double hi) {
    std::vector<int> out;
    for (int e = static_cast<int>(std::ceil(lo - 1e-9)); e <= static_cast<int>(std::floor(hi + 1e-9)); ++e)
      out.push_back(e);
    return out;
  }
  static std::vector<double> Minor(double lo, double hi) {
    std::vector<double> out;
    for (int e = static_cast<int>(std::floor(lo)); e < static_cast<int>(std::ceil(hi)); ++e)
      for (int m = 2; m < 10; ++m) {
        const double v = std::log10(m) + e;
        if (v > lo && v < hi) out.push_back(m * std::pow(10.0, e));
      }
    return out;
  }

  double xlo_, xhi_, ylo_, yhi_;
  double height_;
};

// Grid, frame, ticks and axis titles.
void Axes(const Canvas& c, std::string& svg);

}  // namespace kbench::client::svg
