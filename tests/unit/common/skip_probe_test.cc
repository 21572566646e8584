// For test_main_skip_check (tests/unit/common/CMakeLists.txt): one test that passes, one that skips
// and one that fails, picked with --gtest_filter to prove what test_main.cc returns to CTest.
#include "gtest/gtest.h"

namespace {

TEST(SkipProbe, Passes) { EXPECT_EQ(1 + 1, 2); }
TEST(SkipProbe, Skips) { GTEST_SKIP() << "skipped on purpose"; }
TEST(SkipProbe, Fails) { EXPECT_EQ(1 + 1, 3) << "failed on purpose"; }

}  // namespace
