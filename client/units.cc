// Number humanizing for tables; see units.h.
#include "client/units.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kbench::client {

std::string FormatSig(double v, int digits) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  const double mag = std::floor(std::log10(std::fabs(v)));
  int decimals = digits - 1 - static_cast<int>(mag);
  if (decimals < 0) decimals = 0;
  if (decimals > 9) return absl::StrFormat("%.*e", digits - 1, v);  // Below 1e-7: scientific is clearer.
  std::string s = absl::StrFormat("%.*f", decimals, v);
  // Rounding can add a digit (9.996 -> "10.00"); redo with one decimal fewer.
  if (decimals > 0 && std::fabs(std::stod(s)) >= std::pow(10.0, mag + 1)) s = absl::StrFormat("%.*f", decimals - 1, v);
  return s;
}

std::string FormatDuration(double ns) {
  if (!std::isfinite(ns) || ns < 0) return "-";
  // Thresholds sit just under 1000 so that 999.7 ns prints as "1.00 us", not "1000 ns".
  if (ns < 999.5) return absl::StrCat(FormatSig(ns), " ns");
  if (ns < 999.5e3) return absl::StrCat(FormatSig(ns / 1e3), " us");
  if (ns < 999.5e6) return absl::StrCat(FormatSig(ns / 1e6), " ms");
  return absl::StrCat(FormatSig(ns / 1e9), " s");
}

std::string FormatPercent(double fraction) { return absl::StrCat(FormatSig(fraction * 100.0), "%"); }

std::string FormatRse(double rse) { return absl::StrCat("±", FormatSig(rse * 100.0, 2), "%"); }

std::string FormatGiga(double per_second) { return FormatSig(per_second / 1e9); }

std::string FormatAge(int64_t ms) {
  if (ms < 0) ms = 0;  // Clock skew between client and coordinator.
  int64_t s = ms / 1000;
  if (s < 60) return absl::StrCat(s, "s");
  int64_t m = s / 60;
  if (m < 60) return absl::StrCat(m, "m");
  int64_t h = m / 60;
  if (h < 24) return m % 60 ? absl::StrCat(h, "h", m % 60, "m") : absl::StrCat(h, "h");
  int64_t d = h / 24;
  return h % 24 ? absl::StrCat(d, "d", h % 24, "h") : absl::StrCat(d, "d");
}

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 5) v /= 1024, ++u;
  if (u == 0) return absl::StrCat(bytes, " B");
  return absl::StrCat(FormatSig(v), " ", kUnits[u]);
}

std::string FormatExact(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  // Whole numbers (byte counts, most nanosecond medians) read better without an exponent.
  if (v == std::trunc(v) && std::fabs(v) < 1e17) return absl::StrFormat("%.0f", v);
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

}  // namespace kbench::client
