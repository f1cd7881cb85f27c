// clpool sweep's text report groups runs by site and, within a site, by call path: a helper
// reached through several callers names each path over its own runs, as sweep.json does.
#include "tools/record/sweep_report.h"

#include <gtest/gtest.h>

#include <string>

namespace clpool::record {
namespace {

run_outcome run(bool first_use, std::uint64_t n, const std::string& caller, verdict v) {
  run_outcome r;
  r.point.id = point_id{first_use, n};
  r.point.bytes = 1 << 20;
  r.point.what = first_use ? "clEnqueueWriteBuffer" : "buffer";
  r.point.site = "make_buffer (pipeline)";
  r.point.path = "make_buffer ← " + caller + " ← main (pipeline)";
  r.ran_as = n;
  r.what = v;
  r.detail = "exit 0: recovered";
  r.replay = "clpool sweep --only " + to_string(r.point.id);
  return r;
}

sweep_result pipeline() {
  sweep_result r;
  r.program = {"pipeline"};
  r.profile = "nvidia";
  for (const bool first_use : {false, true}) {
    r.runs.push_back(run(first_use, 1, "load_input", verdict::handled));
    r.runs.push_back(run(first_use, 2, "make_staging", verdict::handled));
  }
  for (const run_outcome& o : r.runs) r.points.push_back(o.point);
  return r;
}

TEST(SweepText, EachCallPathOfASiteOverItsOwnRuns) {
  const std::string text = sweep_text(pipeline());
  const std::string want =
      "handled: 4 runs at 1 site\n"
      "  make_buffer (pipeline)\n"
      "    path: make_buffer ← load_input ← main (pipeline)\n"
      "    alloc:1 (1 MiB buffer): exit 0: recovered\n"
      "    first-use:1 (1 MiB, clEnqueueWriteBuffer): exit 0: recovered\n"
      "    path: make_buffer ← make_staging ← main (pipeline)\n"
      "    alloc:2 (1 MiB buffer): exit 0: recovered\n"
      "    first-use:2 (1 MiB, clEnqueueWriteBuffer): exit 0: recovered\n";
  EXPECT_NE(text.find(want), std::string::npos) << text;
}

TEST(SweepText, ManyHandledRunsOfOnePathAreShortenedPerPath) {
  sweep_result r = pipeline();
  for (std::uint64_t n = 3; n <= 7; ++n)
    r.runs.push_back(run(false, n, "load_input", verdict::handled));
  const std::string text = sweep_text(r);
  EXPECT_NE(text.find("    ... 4 more\n    path: make_buffer ← make_staging"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    alloc:2 (1 MiB buffer)"), std::string::npos) << text;
}

}  // namespace
}  // namespace clpool::record
