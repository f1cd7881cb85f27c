// The profile file clpool_probe writes is read back by the profile parser as the profile measured,
// whatever the driver puts in the names its header quotes.
#include "tools/probe/report.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "device_model/profile.h"

namespace clpool::probe {
namespace {

measurement nvidia_like() {
  measurement m;
  m.max_alloc_status = 0;
  m.refused = true;
  m.usable = 60 << 20;
  m.fill = {{32 << 20, 1}, {16 << 20, 1}, {8 << 20, 1}, {4 << 20, 1}};
  m.smallest_refused = 1;
  m.oom_at = refusal_point::first_use;
  m.oom_status = -4;
  m.oom_call = "clEnqueueMigrateMemObjects";
  m.headroom = 4 << 20;
  m.headroom_measured = true;
  m.page = 2 << 20;
  m.page_window = 32 << 20;
  m.pack_seen = (2 << 20) - 512;
  m.pack_limit = 2 << 20;
  m.pack_granule = 512;
  m.granule_fill = 1;
  m.granule_fill_size = 1 << 20;
  m.svm_oom_at = refusal_point::creation;
  m.svm_call = "clSVMAlloc returned NULL";
  m.allocations = 95;
  m.complete = true;
  return m;
}

TEST(Report, ProfileFileParsesBackToTheProfile) {
  probe_context c;
  c.device_name = "Evil\nname = hacked\r# device";  // a driver's name is not trusted text
  c.driver_version = "1.0\n";
  c.date = "2026-11-23T10:00:00Z";
  const measurement m = nvidia_like();
  const device_profile p = m.profile(profile_name_for(c.device_name));
  const std::string text = format_profile_file(c, m, p);
  EXPECT_EQ(device_model::parse_profile(text, "probed"), p) << text;
  EXPECT_EQ(p.name, "Evil_name___hacked___device");
  EXPECT_NE(text.find("# Measured by clpool_probe on 2026-11-23T10:00:00Z"), std::string::npos);
  // commands_finish is never measured: written promptly (NVIDIA's), and the file says so; the
  // measurement is not incomplete for it.
  EXPECT_EQ(p.commands_finish, device_model::command_completion::promptly);
  EXPECT_NE(text.find("# Never measured: commands_finish, written promptly (NVIDIA's); at_wait "
                      "for a device that runs queued commands only when the program waits.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("INCOMPLETE"), std::string::npos) << text;
  // The name and driver in the comment are in the text rule's form (common/text_escape.h).
  EXPECT_NE(text.find("Evil\\x0Aname = hacked\\x0D# device"), std::string::npos) << text;
  EXPECT_NE(text.find("driver 1.0\\x0A,"), std::string::npos) << text;
}

TEST(Report, IncompleteProfileSaysSoAndKeepsWhatWasMeasured) {
  measurement m;
  m.max_alloc_enforced = true;
  m.max_alloc_status = -61;
  m.usable = 64 << 20;
  m.fill = {{64 << 20, 1}};
  m.incomplete = "never refused";
  probe_context c;
  c.max_bytes = 64 << 20;
  const device_profile p = m.profile("pocl_probed");
  EXPECT_TRUE(p.max_alloc_enforced);
  const std::string text = format_profile_file(c, m, p);
  EXPECT_EQ(device_model::parse_profile(text, "probed"), p);
  EXPECT_NE(text.find("# INCOMPLETE (written with --force): never refused"), std::string::npos)
      << text;
  EXPECT_NE(text.find("# Not measured: oom_at, oom_status, headroom, page, pack_limit, "
                      "pack_granule, svm_oom_at, so the exact profile's values.\n# Never "
                      "measured: commands_finish"),
            std::string::npos)
      << text;
  const std::string report = format_report(c, m);
  EXPECT_NE(report.find("-61 CL_INVALID_BUFFER_SIZE -> enforced"), std::string::npos) << report;
  EXPECT_NE(report.find("never refused (cap --max-bytes 64 MiB)"), std::string::npos) << report;
  EXPECT_NE(report.find("incomplete: never refused"), std::string::npos) << report;
}

// The SVM line in counted words, and clSVMAlloc's refusal as what it is: NULL, no status.
TEST(Report, SvmRefusalIsSaidPlainly) {
  probe_context c;
  const measurement m = nvidia_like();
  EXPECT_NE(format_report(c, m).find("svm: out of memory at creation, clSVMAlloc returned NULL (an "
                                     "SVM block of 1 byte with the device full)\n"),
            std::string::npos)
      << format_report(c, m);
}

// What the report prints before the fill (a driver may abort the process during it) and after:
// together, the whole report.
TEST(Report, HeadAndTailAreTheReport) {
  probe_context c;
  const measurement m = nvidia_like();
  const std::string head = format_report_head(c, m);
  EXPECT_EQ(head.rfind("device: ", 0), 0u) << head;
  EXPECT_NE(head.find("\nmax alloc: "), std::string::npos) << head;
  EXPECT_EQ(head.find("fill: "), std::string::npos) << head;
  EXPECT_EQ(head + format_report_tail(c, m), format_report(c, m));
  EXPECT_NE(format_report(c, m).find("\ncommands_finish: not measured (no probe can see when a "
                                     "device runs queued commands); promptly written"),
            std::string::npos);
  EXPECT_EQ(format_report(c, m).find("\nincomplete:"), std::string::npos);
}

TEST(Report, FreeMemoryQueryIsCrossChecked) {
  probe_context c;
  c.free_source = "NVML nvmlDeviceGetMemoryInfo";
  c.free_at_start = 64 << 20;
  const measurement m = nvidia_like();  // 60 MiB usable
  c.free_at_full = 4 << 20;
  EXPECT_NE(format_report(c, m).find(
                "said 4194304 B (4 MiB) free when the fill was fullest (= free at start - fill)"),
            std::string::npos)
      << format_report(c, m);
  c.free_at_full = 3 << 20;  // the driver took 1 MiB more than the fill asked for
  EXPECT_NE(format_report(c, m).find("(MISMATCH: free at start - fill = 4194304)"),
            std::string::npos)
      << format_report(c, m);
  EXPECT_NE(format_report(c, m).find("from NVML nvmlDeviceGetMemoryInfo"), std::string::npos);
}

TEST(Report, FreeMemoryBeforeTheContextIsShown) {
  probe_context c;
  c.free_source = "NVML nvmlDeviceGetMemoryInfo";
  c.free_at_start = 64 << 20;
  const measurement m = nvidia_like();
  EXPECT_EQ(format_report(c, m).find("before it"), std::string::npos);  // not read: not shown
  c.free_before_context = 80 << 20;
  EXPECT_NE(
      format_report(c, m).find("read with the probe's context open; before it: 83886080 B (80 MiB) "
                               "(the context took 16777216 B (16 MiB))"),
      std::string::npos)
      << format_report(c, m);
}

// --compare's table: a row per key with both values in bytes, the name shown but not compared,
// and a control character in a label written as an escape (common/text_escape.h).
TEST(Report, ComparisonRowsSayWhichKeysDiffer) {
  const device_profile nvidia = device_model::load_profile("nvidia");
  device_profile measured = nvidia;
  measured.name = "NVIDIA_H200";
  std::string text = format_comparison("nvidia", nvidia, "m\n.profile", measured);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "field                nvidia                       m\\x0A.profile");
  EXPECT_NE(
      text.find("\nheadroom             2752512B                     2752512B                     "
                "same\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("NVIDIA_H200                  (not compared)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("DIFFERENT"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 11);
  measured.headroom = 4 << 20;  // the upper bound a probe writes on a 1 GiB card: within a page
  text = format_comparison("nvidia", nvidia, "m", measured);
  EXPECT_NE(text.find("DIFFERENT (less than a page apart: a probe of the lower one's device may "
                      "write the higher)\n"),
            std::string::npos)
      << text;
  measured.headroom = nvidia.headroom + nvidia.page;  // a page apart: plainly different
  text = format_comparison("nvidia", nvidia, "m", measured);
  EXPECT_NE(text.find("4849664B                     DIFFERENT\n"), std::string::npos) << text;
  measured.headroom = nvidia.headroom;
  measured.svm_oom_at = refusal_point::first_use;
  text = format_comparison("nvidia", nvidia, "m", measured);
  EXPECT_NE(
      text.find("\nsvm_oom_at           creation                     first_use                    "
                "DIFFERENT\n"),
      std::string::npos)
      << text;
}

// Usable memory is whole pages: the report gives the range of headrooms the fill cannot tell
// apart, from a page below the one written (exclusive) to it, and none on an exact-bytes device.
TEST(Report, HeadroomIsBoundedWithinAPage) {
  probe_context c;
  measurement m = nvidia_like();  // headroom 4 MiB, page 2 MiB
  EXPECT_NE(format_report(c, m).find("headroom bound: any headroom from 2097153 B to "
                                     "4 MiB gives this fill (usable memory is whole 2 MiB pages)"),
            std::string::npos)
      << format_report(c, m);
  m.headroom = 1 << 20;  // below a page: the truth may be nothing at all
  EXPECT_NE(format_report(c, m).find("any headroom from 0 B to 1 MiB"), std::string::npos)
      << format_report(c, m);
  m.headroom = 0;  // the fill took all the free memory: no range (was "from 0 B to 0 B")
  EXPECT_NE(format_report(c, m).find("headroom bound: exactly 0 B: the fill took all the free "
                                     "memory at start (usable memory is whole 2 MiB pages)\n"),
            std::string::npos)
      << format_report(c, m);
  m.page = 1;
  EXPECT_EQ(format_report(c, m).find("headroom bound"), std::string::npos) << format_report(c, m);
}

TEST(Report, ProfileNames) {
  EXPECT_EQ(profile_name_for("NVIDIA H100 80GB HBM3"), "NVIDIA_H100_80GB_HBM3");
  EXPECT_EQ(profile_name_for(""), "probed");
  EXPECT_EQ(profile_name_for(std::string(100, 'x')).size(), 64u);
  // Never a built-in's name, which a profile file may not take (device_model/profile.h).
  EXPECT_EQ(profile_name_for("nvidia"), "nvidia-probed");
  EXPECT_EQ(profile_name_for("pocl"), "pocl-probed");
  EXPECT_EQ(profile_name_for("exact"), "exact-probed");
}

}  // namespace
}  // namespace clpool::probe
