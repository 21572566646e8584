// The drawing primitives of the Roofline SVG; see plot_svg_canvas.h.
#include "client/plot_svg_canvas.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/units.h"

namespace kbench::client::svg {

std::string Num(double v) { return absl::StrFormat("%.1f", v); }

std::string Escape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string Cut(const std::string& s, size_t max) { return s.size() <= max ? s : s.substr(0, max - 3) + "..."; }

// Colours past the palette: further hues by the golden angle, as #rrggbb.
std::string Colour(size_t i) {
  if (i < std::size(kPalette)) return kPalette[i];
  const double h = std::fmod(static_cast<double>(i) * 137.508, 360.0) / 60.0, s = 0.55, l = 0.45;
  const double c = (1 - std::fabs(2 * l - 1)) * s, x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1)), m = l - c / 2;
  double r = 0, g = 0, b = 0;
  if (h < 1) r = c, g = x;
  else if (h < 2) r = x, g = c;
  else if (h < 3) g = c, b = x;
  else if (h < 4) g = x, b = c;
  else if (h < 5) r = x, b = c;
  else r = c, b = x;
  auto byte = [m](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return absl::StrFormat("#%02x%02x%02x", byte(r), byte(g), byte(b));
}

// 3.35e12, "B/s" -> "3.35 TB/s".
std::string Si(double v, absl::string_view unit) {
  static const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int k = v >= 1 ? static_cast<int>(std::floor(std::log10(v) / 3)) : 0;
  k = std::clamp(k, 0, 6);
  return absl::StrCat(FormatSig(v / std::pow(10.0, 3 * k)), " ", kPrefixes[k], unit);
}

// The tick label of 10^e: plain decimals for intensities, SI prefixes for FLOP/s.
std::string DecadeLabel(int e, bool si) {
  if (si && e >= 0 && e < 21) {
    static const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    return absl::StrCat(std::string("1") + std::string(e % 3, '0'), e >= 3 ? " " : "", kPrefixes[e / 3]);
  }
  if (e >= 0 && e <= 4) return std::string("1") + std::string(e, '0');
  if (e < 0 && e >= -4) return absl::StrCat("0.", std::string(-e - 1, '0'), "1");
  return absl::StrCat("1e", e);
}

std::pair<double, double> LogRange(double min, double max, double min_decades) {
  double lo = std::floor(2 * std::log10(min / 1.25)) / 2;
  double hi = std::ceil(2 * std::log10(max * 1.25)) / 2;
  while (hi - lo < min_decades) {
    hi += 0.5;
    if (hi - lo < min_decades) lo -= 0.5;
  }
  return {lo, hi};
}

void Axes(const Canvas& c, std::string& svg) {
  auto vline = [&](double x, const char* colour) {
    absl::StrAppend(&svg, "<line x1=\"", Num(x), "\" y1=\"", Num(c.top()), "\" x2=\"", Num(x), "\" y2=\"",
                    Num(c.bottom()), "\" stroke=\"", colour, "\"/>\n");
  };
  auto hline = [&](double y, const char* colour) {
    absl::StrAppend(&svg, "<line x1=\"", Num(c.left()), "\" y1=\"", Num(y), "\" x2=\"", Num(c.right()), "\" y2=\"",
                    Num(y), "\" stroke=\"", colour, "\"/>\n");
  };
  absl::StrAppend(&svg, "<g class=\"grid\" stroke-width=\"1\">\n");
  for (double v : c.XMinor()) vline(c.X(v), "#f0f0f0");
  for (double v : c.YMinor()) hline(c.Y(v), "#f0f0f0");
  for (int e : c.XDecades()) vline(c.X(std::pow(10.0, e)), "#d4d4d4");
  for (int e : c.YDecades()) hline(c.Y(std::pow(10.0, e)), "#d4d4d4");
  absl::StrAppend(&svg, "</g>\n");
  absl::StrAppend(&svg, "<rect x=\"", Num(c.left()), "\" y=\"", Num(c.top()), "\" width=\"", Num(c.right() - c.left()),
                  "\" height=\"", Num(c.bottom() - c.top()), "\" fill=\"none\" stroke=\"#333\"/>\n");
  absl::StrAppend(&svg, "<g class=\"ticks\" font-size=\"11\" fill=\"#333\">\n");
  for (int e : c.XDecades())
    absl::StrAppend(&svg, "<text class=\"tick-x\" x=\"", Num(c.X(std::pow(10.0, e))), "\" y=\"", Num(c.bottom() + 16),
                    "\" text-anchor=\"middle\">", DecadeLabel(e, false), "</text>\n");
  for (int e : c.YDecades())
    absl::StrAppend(&svg, "<text class=\"tick-y\" x=\"", Num(c.left() - 6), "\" y=\"", Num(c.Y(std::pow(10.0, e)) + 4),
                    "\" text-anchor=\"end\">", DecadeLabel(e, true), "</text>\n");
  absl::StrAppend(&svg, "</g>\n");
  const double mid_x = (c.left() + c.right()) / 2, mid_y = (c.top() + c.bottom()) / 2;
  absl::StrAppend(&svg, "<text x=\"", Num(mid_x), "\" y=\"", Num(c.bottom() + 40),
                  "\" text-anchor=\"middle\" font-size=\"13\">Arithmetic intensity (FLOP/byte)</text>\n");
  absl::StrAppend(&svg, "<text x=\"", Num(24), "\" y=\"", Num(mid_y), "\" text-anchor=\"middle\" font-size=\"13\" ",
                  "transform=\"rotate(-90 24 ", Num(mid_y), ")\">Attained FLOP/s</text>\n");
}

}  // namespace kbench::client::svg
