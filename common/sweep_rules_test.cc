#include "common/sweep_rules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace clpool::common {
namespace {

TEST(SweepPoint, ParsesTheNamesReportsGive) {
  EXPECT_EQ(parse_sweep_point("alloc:7"), (sweep_point{false, 7}));
  EXPECT_EQ(parse_sweep_point("first-use:3"), (sweep_point{true, 3}));
  EXPECT_EQ(parse_sweep_point("alloc:9999999999999999999"),
            (sweep_point{false, 9999999999999999999ull}));
  for (const sweep_point p : {sweep_point{false, 1}, sweep_point{true, 42}})
    EXPECT_EQ(parse_sweep_point(to_string(p)), p);
}

TEST(SweepPoint, RefusesAnythingElse) {
  for (const char* bad : {"", "alloc", "alloc:", "alloc:0", "alloc:-1", "alloc:+1", "alloc: 1",
                          "alloc:1 ", "alloc:1x", "alloc:0x10", "Alloc:1", "first_use:1", "count",
                          "alloc:1:2", "alloc:99999999999999999999"})
    EXPECT_FALSE(parse_sweep_point(bad)) << bad;
}

TEST(SweepTimeout, AboveZeroAndAtMostAWeek) {
  EXPECT_EQ(sweep_timeout_problem(0.001), "");
  EXPECT_EQ(sweep_timeout_problem(604800), "");
  EXPECT_EQ(sweep_timeout_problem(0), "is not a number of seconds above 0");
  EXPECT_EQ(sweep_timeout_problem(-1), "is not a number of seconds above 0");
  EXPECT_EQ(sweep_timeout_problem(std::nan("")), "is not a number of seconds above 0");
  EXPECT_EQ(sweep_timeout_problem(-std::numeric_limits<double>::infinity()),
            "is not a number of seconds above 0");
  EXPECT_EQ(sweep_timeout_problem(604800.5), "is more than a week (604800 s)");
  EXPECT_EQ(sweep_timeout_problem(1e300), "is more than a week (604800 s)");
  EXPECT_EQ(sweep_timeout_problem(std::numeric_limits<double>::infinity()),
            "is more than a week (604800 s)");
}

TEST(SweepTimeout, TheFaultFreeRunGetsTenTimesAtLeastAMinute) {
  EXPECT_EQ(fault_free_limit(std::nullopt), std::nullopt);
  EXPECT_EQ(fault_free_limit(1.0), 60.0);
  EXPECT_EQ(fault_free_limit(6.0), 60.0);
  EXPECT_EQ(fault_free_limit(7.5), 75.0);
}

TEST(SweepTimeout, ARunGetsTheTimeoutElseTenTimesTheFaultFreeRunAtLeastTenSeconds) {
  EXPECT_EQ(sweep_run_timeout(3.0, 100.0), 3.0);
  EXPECT_EQ(sweep_run_timeout(std::nullopt, 0.2), 10.0);
  EXPECT_EQ(sweep_run_timeout(std::nullopt, 2.5), 25.0);
}

TEST(SignalText, NamedWhereTheSignalHasAName) {
  EXPECT_EQ(signal_text(11), "signal 11 (SIGSEGV)");
  EXPECT_EQ(signal_text(6), "signal 6 (SIGABRT)");
  EXPECT_EQ(signal_text(9), "signal 9 (SIGKILL)");
  EXPECT_EQ(signal_text(40), "signal 40");  // real-time: no name
}

}  // namespace
}  // namespace clpool::common
