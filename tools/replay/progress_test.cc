#include "tools/replay/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace clpool::replay_cli {
namespace {

TEST(Progress, StyleFollowsTheTerminalUnlessAsked) {
  EXPECT_EQ(choose_progress_style(false, false, false), progress_style::off);
  EXPECT_EQ(choose_progress_style(false, false, true), progress_style::in_place);
  EXPECT_EQ(choose_progress_style(true, false, false), progress_style::lines);
  EXPECT_EQ(choose_progress_style(true, false, true), progress_style::in_place);
  EXPECT_EQ(choose_progress_style(false, true, true), progress_style::off);
}

TEST(Progress, Durations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(44.6), "45s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(2 * 3600 + 7 * 60 + 10), "2h07m");
  EXPECT_EQ(format_duration(-3), "0s");
}

// Two configurations of a search: the total is unknown until the first estimate, then this
// configuration's estimate plus as many again for the next; the ETA scales the time so far.
TEST(Progress, OverallCountAndEta) {
  double t = 100;
  run_progress p(2, [&] { return t; });
  p.start_replay(0, 0);  // the unbounded replay: nothing known yet
  EXPECT_EQ(p.summary(0.5), "replay 1 of ?, config 1 of 2");
  t += 10;
  p.end_replay();
  p.start_replay(0, 4);                 // four more at most, this one included
  EXPECT_EQ(p.estimated_total(), 10u);  // 1 + 4 here, 5 for the next configuration
  t += 10;                              // 20 s for 1.5 replays: 40/3 s a replay, 8.5 left
  EXPECT_EQ(p.summary(0.5), "replay 2 of ~10, config 1 of 2, ETA 1m53s");
  p.end_replay();
  p.start_replay(0, 1);
  p.end_replay();
  // The next configuration, its first replay: estimated as the first one took (3 replays).
  p.start_replay(1, 0);
  EXPECT_EQ(p.estimated_total(), 6u);
  p.end_replay();
  p.start_replay(1, 2);
  EXPECT_EQ(p.estimated_total(), 3u + 1 + 2);
  p.end_replay();
  p.start_replay(1, 1);
  EXPECT_EQ(p.summary(0).rfind("replay 6 of 6, config 2 of 2", 0), 0u) << p.summary(0);
}

TEST(Progress, OneConfigurationHasNoConfigCount) {
  double t = 0;
  run_progress p(1, [&] { return t; });
  p.start_replay(0, 1);
  t = 4;
  EXPECT_EQ(p.summary(0.25), "replay 1 of 1, ETA 12s");
}

std::string printed(progress_style style, const auto& body) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  double t = 0;
  {
    progress_printer printer(style, f, 2.0, [&] { return t; });
    body(printer, t);
  }
  std::fclose(f);
  std::string out(buf, size);
  std::free(buf);
  return out;
}

TEST(Progress, LinesStyleWritesWholeLinesAtMostEveryInterval) {
  const std::string out = printed(progress_style::lines, [](progress_printer& p, double& t) {
    p.show("a", true);
    p.show("b");  // too soon
    t = 1;
    p.show("c", true);  // a replay's start is always shown
    t = 3.5;
    p.show("d");
    p.clear();
  });
  EXPECT_EQ(out,
            "clpool_replay: progress: a\nclpool_replay: progress: c\nclpool_replay: progress: d\n");
}

TEST(Progress, InPlaceStylePadsAndClears) {
  const std::string out = printed(progress_style::in_place, [](progress_printer& p, double&) {
    p.show("long line");
    p.show("short");
    p.clear();
  });
  EXPECT_EQ(out, "\rlong line\rshort    \r         \r");
}

TEST(Progress, OffWritesNothing) {
  EXPECT_EQ(printed(progress_style::off,
                    [](progress_printer& p, double&) {
                      p.show("x", true);
                      p.clear();
                    }),
            "");
}

TEST(Progress, Bar) {
  EXPECT_EQ(progress_bar(50, 100), "[###############...............]  50%");
  EXPECT_EQ(progress_bar(5 << 20, 0), "5 MiB read");
}

}  // namespace
}  // namespace clpool::replay_cli
