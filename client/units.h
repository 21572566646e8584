// Human-readable numbers for tables: durations with automatic units, rates, percentages, ages,
// byte sizes; and the exact, machine-readable form used by CSV.
#pragma once

#include <cstdint>
#include <string>

namespace kbench::client {

// `digits` significant digits, never scientific for values >= 1 ("3352", "812", "12.3", "0.0123").
std::string FormatSig(double v, int digits = 3);
// Nanoseconds with automatic units: "812 ns", "1.23 us", "45.6 ms", "2.00 s".
std::string FormatDuration(double ns);
// A fraction as a percentage: 0.873 -> "87.3%".
std::string FormatPercent(double fraction);
// Relative standard error: 0.0031 -> "±0.31%".
std::string FormatRse(double rse);
// Bytes (or FLOP) per second scaled to giga, 3 significant digits: 2.5e12 -> "2500", 84.9e9 -> "84.9".
std::string FormatGiga(double per_second);
// An age in milliseconds: "12s", "3m", "2h5m", "4d3h".
std::string FormatAge(int64_t ms);
// A byte count in binary units: "80.0 GiB", "512 MiB".
std::string FormatBytes(int64_t bytes);
// Text that reads back as exactly the same double, for CSV: whole numbers without an exponent
// ("84900000000"), others in their shortest form ("0.1", "1234567.5", "1e-09").
std::string FormatExact(double v);

}  // namespace kbench::client
