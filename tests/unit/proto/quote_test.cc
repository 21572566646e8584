// Quoting user values in errors, and cutting messages: short, escaped, and saying what was left out.
#include "api/quote.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace kbench::api {
namespace {

TEST(Quote, ShortValueIsQuotedWhole) { EXPECT_EQ(Quote("rmsnorm"), "'rmsnorm'"); }

TEST(Quote, LongValueShowsAPrefixAndItsSize) {
  const std::string q = Quote(std::string(10 << 20, 'x'));
  EXPECT_EQ(q, "'" + std::string(kMaxQuoteBytes, 'x') + "...' (10485760 bytes)");
}

TEST(Quote, ValueAtTheLimitIsNotCut) {
  EXPECT_EQ(Quote(std::string(kMaxQuoteBytes, 'a')), "'" + std::string(kMaxQuoteBytes, 'a') + "'");
}

TEST(Quote, ControlAndNonAsciiBytesAndQuotesAreEscaped) {
  const std::string q = Quote(std::string("a\n\x1b[31m\xff'", 9));
  EXPECT_EQ(q, "'a\\n\\x1b[31m\\xff\\''");
  for (char c : q) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
}

TEST(Quote, CutNeverSplitsAUtf8Character) {
  // 39 ASCII bytes then a 2-byte character across the 40-byte limit: the character is left out whole.
  const std::string v = std::string(39, 'a') + "\xc3\xa9" + "tail";
  EXPECT_EQ(Quote(v), "'" + std::string(39, 'a') + "...' (45 bytes)");
}

TEST(MapEntryPath, QuotesAPrefixOfTheKey) {
  EXPECT_EQ(MapEntryPath("spec.labels", "branch"), "spec.labels[\"branch\"]");
  EXPECT_EQ(MapEntryPath("spec.labels", std::string(100, 'k')),
            "spec.labels[\"" + std::string(kMaxQuoteBytes, 'k') + "...\"]");
  EXPECT_EQ(MapEntryPath("l", "a\"b"), "l[\"a\\\"b\"]");
}

TEST(CutText, KeepsShortTextAndCutsLongText) {
  EXPECT_EQ(CutText("short", 100), "short");
  EXPECT_EQ(CutText(std::string(100, 'x'), 100), std::string(100, 'x'));
  const std::string cut = CutText(std::string(10 << 20, 'x'), 2048);
  EXPECT_LE(cut.size(), 2048u);
  EXPECT_TRUE(absl::EndsWith(cut, " ... (10485760 bytes in all)")) << cut.substr(cut.size() - 60);
  EXPECT_TRUE(absl::StartsWith(cut, "xxxx"));
}

TEST(CutText, CutsAtACharacterBoundary) {
  // 3-byte characters: a cut inside one would leave invalid UTF-8 in a proto3 string.
  std::string euros;
  for (int i = 0; i < 1000; ++i) euros += "\xe2\x82\xac";
  const std::string cut = CutText(euros, 100);
  const size_t body = cut.find(" ... (");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(body % 3, 0u) << cut;
}

}  // namespace
}  // namespace kbench::api
