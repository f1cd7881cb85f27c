#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
TEST(Smoke, Works) { EXPECT_EQ(1 + 1, 2); }
RC_GTEST_PROP(Smoke, Prop, (int x)) { RC_ASSERT(x == x); }
