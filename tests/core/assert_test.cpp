// SPDX-License-Identifier: Apache-2.0
// heddle/core/detail/assert.hpp: the one fatal path (its first words say whose fault it is) and
// HEDDLE_ASSERT, compiled in with HEDDLE_ASSERTIONS and compiled to nothing without it.
#include <gtest/gtest.h>

#include <heddle/heddle.hpp>

#include "heddle/core/detail/assert.hpp"

namespace assert_test {
namespace {

namespace cd = heddle::core_detail;

class AssertDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// The CMake option reaches the header the libraries and the tests compile with
// (heddle/core/build_config.hpp).
TEST(Assert, EnabledAsTheBuildSays) { EXPECT_EQ(cd::assertions_enabled, HEDDLE_TEST_ASSERTIONS != 0); }

TEST(Assert, OffDoesNotEvaluateItsArgument) {
  int evaluated = 0;
  HEDDLE_DETAIL_ASSERT_OFF(++evaluated > 0, "counts its evaluations");
  HEDDLE_DETAIL_ASSERT_OFF(++evaluated < 0, "false, and still nothing happens");
  EXPECT_EQ(evaluated, 0);
}

TEST(Assert, OnEvaluatesItsArgumentOnce) {
  int evaluated = 0;
  HEDDLE_DETAIL_ASSERT_ON(++evaluated > 0, "counts its evaluations");
  EXPECT_EQ(evaluated, 1);
}

// HEDDLE_ASSERT is the one of the two forms the build chose.
TEST(Assert, TheBuildsFormEvaluatesItsArgumentOnlyWhenOn) {
  int evaluated = 0;
  HEDDLE_ASSERT(++evaluated > 0, "counts its evaluations");
  EXPECT_EQ(evaluated, cd::assertions_enabled ? 1 : 0);
}

TEST_F(AssertDeathTest, AFailedAssertionIsAnInternalError) {
  EXPECT_DEATH(
      {
        const int top = 2;
        const int bottom = 1;
        HEDDLE_DETAIL_ASSERT_ON(top <= bottom, "the deque's top passed its bottom");
      },
      "^heddle: internal error: .*tests/core/assert_test\\.cpp:[0-9]+: `top <= bottom` does not hold: the deque's "
      "top passed its bottom \\(a bug in heddle\\)\n");
}

TEST_F(AssertDeathTest, HeddleAssertEndsTheProcessWhenOn) {
  if (!cd::assertions_enabled) GTEST_SKIP() << "assertions are compiled out of this build (HEDDLE_ASSERTIONS off)";
  const bool holds = false;
  EXPECT_DEATH(HEDDLE_ASSERT(holds, "a checked invariant"),
               "^heddle: internal error: .*assert_test\\.cpp:[0-9]+: `holds` does not hold: a checked invariant");
}

TEST_F(AssertDeathTest, EachKindHasItsPrefix) {
  EXPECT_DEATH(cd::fatal_misuse("more leave() than enter() calls", "heddle::group::leave"),
               "^heddle: misuse: heddle::group::leave: more leave\\(\\) than enter\\(\\) calls\n");
  EXPECT_DEATH(cd::fatal_internal("a record run twice", "heddle::core_detail::worker"),
               "^heddle: internal error: heddle::core_detail::worker: a record run twice\n");
  EXPECT_DEATH(cd::fatal_unrecoverable("out of memory", "heddle::serial_queue"),
               "^heddle: fatal: heddle::serial_queue: out of memory\n");
}

}  // namespace
}  // namespace assert_test
