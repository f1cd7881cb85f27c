// clpool_replay --diff's text (diff_text) from the engine's model (replay/diff.h), built by hand
// here: the engine's comparison has its own test (replay/diff_test.cc), the command line
// diff_cli_test.sh.
#include "tools/replay/diff_command.h"

#include <gtest/gtest.h>

namespace clpool::replay_cli {

using replay::diff_result;
using replay::site_change;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

diff_result two_sites(std::optional<double> max_growth, std::vector<std::string> over) {
  diff_result d;
  d.old_path = "a.trace";
  d.new_path = "b\x1b]0;x\x07.trace";  // a hostile file name: shown escaped
  d.device = "sim, deferred allocation, nvidia profile";
  d.granule = MiB;
  d.configs = {{"nopool", 100 * MiB, 104 * MiB, 101 * MiB, 110 * MiB},
               {"pool:lb=4", 100 * MiB, 100 * MiB, 101 * MiB, std::nullopt}};
  site_change grew{"Cache.put (/app/lib.py:12)", {}, 200, 600};
  grew.callers = {{"serve (/app/lib.py:40)",
                   400,
                   400,
                   400,
                   2,
                   {{"main (/app/lib.py:60)", 400, 400, 400, 2, {}}}}};
  // As compare_runs orders them: largest growth first, largest shrink last.
  d.sites = {
      grew, {"tmp (/app/lib.py:30)", {}, 500, 0}, {"scratch (/app/lib.py:20)", {}, 1000, 400}};
  d.max_growth = max_growth;
  d.over = std::move(over);
  return d;
}

TEST(DiffText, TheWholeReport) {
  EXPECT_EQ(
      diff_text(two_sites(
          0.05, {"nopool's minimum capacity grew +8.9%", "pool:lb=4 no longer fits any device"})),
      "old  a.trace\n"
      "new  b\\x1B]0;x\\x07.trace\n"
      "device: sim, deferred allocation, nvidia profile; peak: device memory on an unbounded "
      "device; "
      "minimum capacity: the smallest device with no out-of-memory, in steps of 1 MiB\n"
      "configuration  peak old  peak new  change  min capacity old  min capacity new     change\n"
      "----------------------------------------------------------------------------------------\n"
      "nopool          100 MiB   104 MiB   +4.0%           101 MiB           110 MiB      +8.9%\n"
      "pool:lb=4       100 MiB   100 MiB   +0.0%           101 MiB              none  none fits\n"
      "sites whose memory grew most (each site's peak of live device memory, requested bytes):\n"
      "  1. Cache.put (/app/lib.py:12)\n"
      "     +400 B: 200 bytes -> 600 bytes\n"
      "     called from (live at the site's peak, requested bytes):\n"
      "       serve (/app/lib.py:40): 400 bytes in 2 blocks\n"
      "         main (/app/lib.py:60): 400 bytes in 2 blocks\n"
      "sites whose memory shrank most:\n"
      "  1. scratch (/app/lib.py:20)\n"
      "     -600 B: 1000 bytes -> 400 bytes\n"
      "  2. tmp (/app/lib.py:30)\n"
      "     -500 B: 500 bytes -> 0 bytes\n"
      "--max-growth 5.0%: exceeded: nopool's minimum capacity grew +8.9%; pool:lb=4 no longer fits "
      "any device\n");
}

TEST(DiffText, TheGateAndTheListsTop) {
  EXPECT_NE(diff_text(two_sites(10.0, {})).find("\n--max-growth 1000.0%: passed\n"),
            std::string::npos);
  EXPECT_EQ(diff_text(two_sites(std::nullopt, {})).find("--max-growth"),
            std::string::npos);  // no gate, no line
  const std::string one = diff_text(two_sites(std::nullopt, {}), 1);
  EXPECT_NE(
      one.find(
          "  1. scratch (/app/lib.py:20)\n     -600 B: 1000 bytes -> 400 bytes\n  ... 1 more\n"),
      std::string::npos)
      << one;
  diff_result same = two_sites(std::nullopt, {});
  for (site_change& s : same.sites) s.new_bytes = s.old_bytes;
  EXPECT_NE(diff_text(same).find("\nno site's peak changed\n"), std::string::npos);
}

}  // namespace
}  // namespace clpool::replay_cli
