// Tests of number humanizing for tables and the exact CSV form.
#include "client/units.h"

#include <string>

#include "gtest/gtest.h"

namespace kbench::client {
namespace {

TEST(Units, Duration) {
  EXPECT_EQ(FormatDuration(812), "812 ns");
  EXPECT_EQ(FormatDuration(12.34), "12.3 ns");
  EXPECT_EQ(FormatDuration(1234), "1.23 us");
  EXPECT_EQ(FormatDuration(999.7), "1.00 us");  // Rounds up into the next unit, not "1000 ns".
  EXPECT_EQ(FormatDuration(45.6e6), "45.6 ms");
  EXPECT_EQ(FormatDuration(2e9), "2.00 s");
  EXPECT_EQ(FormatDuration(125e9), "125 s");
  EXPECT_EQ(FormatDuration(-1), "-");
}

TEST(Units, Significant) {
  EXPECT_EQ(FormatSig(3352.4), "3352");
  EXPECT_EQ(FormatSig(812.34), "812");
  EXPECT_EQ(FormatSig(9.996), "10.0");
  EXPECT_EQ(FormatSig(0.012345), "0.0123");
  EXPECT_EQ(FormatSig(0), "0");
}

TEST(Units, RatesAndPercentages) {
  EXPECT_EQ(FormatGiga(2.5e12), "2500");
  EXPECT_EQ(FormatGiga(812.5e9), "812");
  EXPECT_EQ(FormatGiga(84.9e9), "84.9");
  EXPECT_EQ(FormatPercent(0.873), "87.3%");
  EXPECT_EQ(FormatPercent(1.02), "102%");
  EXPECT_EQ(FormatRse(0.0031), "±0.31%");
}

TEST(Units, AgeAndBytes) {
  EXPECT_EQ(FormatAge(12'400), "12s");
  EXPECT_EQ(FormatAge(3 * 60'000 + 5'000), "3m");
  EXPECT_EQ(FormatAge((2 * 60 + 5) * 60'000), "2h5m");
  EXPECT_EQ(FormatAge(2 * 3'600'000), "2h");
  EXPECT_EQ(FormatAge(27 * 3'600'000LL), "1d3h");
  EXPECT_EQ(FormatAge(-5), "0s");
  EXPECT_EQ(FormatBytes(80LL << 30), "80.0 GiB");
  EXPECT_EQ(FormatBytes(512LL << 20), "512 MiB");
  EXPECT_EQ(FormatBytes(100), "100 B");
}

TEST(Units, ExactRoundTrips) {
  for (double v : {0.1, 1234567.5, 1e-9, 3.0e12, 123.456789012345}) EXPECT_EQ(std::stod(FormatExact(v)), v);
  EXPECT_EQ(FormatExact(0.1), "0.1");
  EXPECT_EQ(FormatExact(1500), "1500");
  EXPECT_EQ(FormatExact(8.49e10), "84900000000");
  EXPECT_EQ(FormatExact(-0.0), "-0");
}

}  // namespace
}  // namespace kbench::client
