// Probing a mockcl device configured with profile P, through the system's ICD loader as any
// OpenCL program would (OCL_ICD_VENDORS, MOCKCL_DEVICES), writes P back: every field but the name,
// for the built-in profiles and for seeded random ones. The binary runs as a child process.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "device_model/profile.h"
#include "tools/probe/measure.h"
#include "tools/probe/profile_gen.h"

namespace clpool::probe {
namespace {

using device_model::device_profile;

constexpr std::uint64_t MiB = 1 << 20;

std::string tmpdir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr && *t != '\0' ? t : "/tmp";
}

// What the probe writes for profile `p`: commands_finish is never measured, so promptly (NVIDIA's).
device_profile as_probed(device_profile p) {
  p.commands_finish = device_model::command_completion::promptly;
  return p;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class RoundTrip : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The loader reads the .icd file's line as a path: it must be absolute.
    char* so = realpath(std::getenv("LIBMOCKCL_SO"), nullptr);
    ASSERT_NE(so, nullptr) << "LIBMOCKCL_SO";
    std::ofstream(tmpdir() + "/mockcl.icd") << so << "\n";
    free(so);
    setenv("OCL_ICD_VENDORS", (tmpdir() + "/mockcl.icd").c_str(), 1);
  }

  // Probes a mock device of `capacity` bytes with profile `p`; returns the profile written (exit
  // 0: everything measured but commands_finish, which the report says no probe can see).
  device_profile probe(const device_profile& p, std::uint64_t capacity) {
    const std::string n = std::to_string(++runs_);
    const std::string in = tmpdir() + "/configured" + n + ".profile";
    const std::string out = tmpdir() + "/probed" + n + ".profile";
    const std::string log = tmpdir() + "/probe" + n + ".log";
    std::ofstream(in) << device_model::format_profile(p);
    setenv("MOCKCL_DEVICES",
           ("gpu:capacity=" + std::to_string(capacity) + ",profile=" + in).c_str(), 1);
    const std::string cmd = "'" + std::string(std::getenv("CLPOOL_PROBE")) + "' --output '" + out +
                            "' > '" + log + "' 2>&1";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(cmd.c_str());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "exit " << WEXITSTATUS(status) << " probing\n"
        << device_model::format_profile(p) << slurp(log);
    EXPECT_LT(seconds, 10.0) << "a probe on mockcl is fast";
    std::cout << p.name << " (oom_at " << device_model::to_string(p.oom_at) << " " << p.oom_status
              << ", page " << p.page << ", pack " << p.pack_limit << "/" << p.pack_granule
              << ", headroom " << p.headroom << ", capacity " << capacity << "): probed in "
              << seconds << " s\n";
    EXPECT_NE(
        slurp(log).find("\ncommands_finish: not measured (no probe can see when a device runs "
                        "queued commands)"),
        std::string::npos)
        << slurp(log);
    EXPECT_EQ(slurp(log).find("incomplete:"), std::string::npos) << slurp(log);
    device_profile got = device_model::load_profile(out);
    got.name = p.name;  // the name is the device's, not the profile's
    return got;
  }

  int runs_ = 0;
};

TEST_F(RoundTrip, BuiltinProfiles) {
  for (const char* name : {"exact", "nvidia", "pocl"}) {
    const device_profile p = device_model::load_profile(name);
    // Usable memory a whole number of pages: the headroom is then observable exactly.
    const std::uint64_t capacity = 64 * std::max<std::uint64_t>(p.page, 4096) + p.headroom;
    EXPECT_EQ(probe(p, capacity), as_probed(p)) << name;
  }
}

TEST_F(RoundTrip, RandomObservableProfiles) {
  std::set<std::string> kinds;  // what the seeds covered: the test is only as good as its spread
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    std::mt19937_64 rng(seed);
    const device_profile p = testing::random_profile(rng, /*observable=*/true);
    kinds.insert("oom_at " + std::string(device_model::to_string(p.oom_at)));
    kinds.insert("oom_status " + std::to_string(p.oom_status));
    kinds.insert(p.page == 1              ? "exact"
                 : p.pack_limit == 0      ? "pages"
                 : p.pack_limit == p.page ? "packs to page"
                                          : "packs below page");
    kinds.insert(p.max_alloc_enforced ? "max_alloc enforced" : "max_alloc not enforced");
    kinds.insert("svm_oom_at " + std::string(device_model::to_string(p.svm_oom_at)));
    EXPECT_EQ(probe(p, testing::capacity_for(p, rng, 0)), as_probed(p))
        << "seed " << seed << "\n"
        << device_model::format_profile(p);
  }
  EXPECT_EQ(kinds.size(), 3u + 3u + 4u + 2u + 2u)
      << "the seeds no longer cover every kind of profile";
}

TEST_F(RoundTrip, UnalignedCapacityGivesTheObservableHeadroom) {
  // 1 GiB with nvidia's 2.625 MiB headroom: 510 whole 2 MiB pages are usable, 1.375 MiB is not.
  const device_profile p = device_model::load_profile("nvidia");
  const device_profile got = probe(p, 1024 * MiB);
  EXPECT_EQ(got, as_probed(observable(p, 1024 * MiB)));
  EXPECT_EQ(got.headroom, 1024 * MiB - 510 * 2 * MiB);
}

}  // namespace
}  // namespace clpool::probe
