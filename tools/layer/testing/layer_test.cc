// Runs layer_driver scenarios through the real ICD loader with the layer in OPENCL_LAYERS, then
// reads the trace with the strict trace reader and checks its events.
//
//   layer_test LAYER_SO DRIVER PLATFORM [ICD]
//
// PLATFORM is a part of the platform name the driver must see (so a test cannot silently run over
// the wrong ICD). ICD, when given, is put in OCL_ICD_VENDORS (a .icd file or a library), so the
// same test runs over POCL (the system's vendors) and over mockcl.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "trace/trace_reader.h"

extern char** environ;

namespace {

using clpool::trace::trace_action;
using clpool::trace::trace_event;

std::string layer_so;
std::string driver;
std::string icd;  // empty: the system's vendors
std::string platform;

std::string absolute(const char* path) {
  char resolved[PATH_MAX];
  if (realpath(path, resolved) == nullptr) {
    std::fprintf(stderr, "layer_test: cannot resolve %s\n", path);
    std::exit(2);
  }
  return resolved;
}

std::string tmpdir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

struct run_result {
  int exit_code = -1;
  std::string stderr_text;
  std::string trace_path;
};

// Runs the driver with a clean CLPOOL_LAYER_* environment plus `vars`.
run_result run_driver(const std::string& scenario, std::map<std::string, std::string> vars,
                      bool record = true) {
  static int counter = 0;
  const std::string base = tmpdir() + "/" + scenario + "_" + std::to_string(++counter);
  run_result r;
  r.trace_path = base + ".trace";
  if (record && vars.count("CLPOOL_LAYER_TRACE") == 0) vars["CLPOOL_LAYER_TRACE"] = r.trace_path;
  vars["OPENCL_LAYERS"] = layer_so;
  vars["POCL_CACHE_DIR"] = tmpdir() + "/pocl-cache";
  if (!icd.empty()) vars["OCL_ICD_VENDORS"] = icd;
  if (const char* asan = std::getenv("ASAN_OPTIONS")) {
    // Under --config=asan the driver and the layer keep ASan and UBSan, but not LeakSanitizer:
    // its exit-time thread tracer crashes (SIGSEGV in StopTheWorld) on the driver's idle POCL
    // worker threads. The layer's allocations are leak-checked by recorder_test instead.
    vars["ASAN_OPTIONS"] = std::string(asan) + ":detect_leaks=0";
  }

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("CLPOOL_LAYER_", 0) == 0 || vars.count(name) != 0) continue;
    env_strings.push_back(entry);
  }
  for (const auto& [name, value] : vars) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  const std::string stderr_path = base + ".stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::string arg0 = driver, arg1 = scenario;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, driver.c_str(), &actions, nullptr, argv, envp.data()) != 0) {
    ADD_FAILURE() << "cannot spawn " << driver;
    return r;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(stderr_path);
  std::stringstream text;
  text << in.rdbuf();
  r.stderr_text = text.str();
  return r;
}

// Reads the trace strictly and renders each event as "action size kind flags" (ids are checked by
// the reader: every free names a live alloc). The program's releases and waits (FORMAT.md "Two
// moments of a free"), which depend on when the driver frees, are left out unless asked for, and
// so are first uses (version 4, FORMAT.md "First uses"), which a budget charged at first use
// records: the trace is version 4 exactly when its first_uses comment says so.
std::vector<std::string> summary(const run_result& r, std::vector<trace_event>* events = nullptr,
                                 bool releases = false, bool uses = false) {
  clpool::trace::read_result read = clpool::trace::read_all(r.trace_path);
  EXPECT_FALSE(read.error) << read.error->what();
  bool first_uses = false;
  for (const auto& [key, value] : read.metadata) first_uses = first_uses || key == "first_uses";
  EXPECT_EQ(read.version, first_uses ? clpool::trace::first_use_format_version
                                     : clpool::trace::release_format_version);
  std::erase_if(read.events, [releases, uses](const trace_event& e) {
    using clpool::trace::trace_action;
    return (!releases && (e.action == trace_action::release || e.action == trace_action::wait)) ||
           (!uses && e.action == trace_action::use);
  });
  std::vector<std::string> lines;
  for (const trace_event& e : read.events) {
    std::ostringstream line;
    line << to_string(e.action) << " " << e.size << " " << to_string(e.kind) << " 0x" << std::hex
         << e.flags;
    lines.push_back(line.str());
  }
  if (events != nullptr) *events = read.events;
  return lines;
}

// True when the driver runs a buffer's destructor callbacks after clReleaseMemObject returns
// (layer_driver platforms asks it): the layer's frees then land later than the program's next
// calls, in the driver's order, and only the events and their pairing can be checked.
bool destructor_callbacks_deferred();

// `actual` holds the `expected` events: in that order where the driver runs destructor
// callbacks at release, in any order where it defers them. Returns whether the order was checked.
bool expect_events(const std::vector<std::string>& actual, std::vector<std::string> expected) {
  if (!destructor_callbacks_deferred()) {
    EXPECT_EQ(actual, expected);
    return true;
  }
  std::vector<std::string> sorted_actual = actual;
  std::sort(sorted_actual.begin(), sorted_actual.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted_actual, expected) << "(any order: the driver defers destructor callbacks)";
  return false;
}

// The id of the n-th event (0-based) must equal the id of the m-th.
void expect_same_block(const std::vector<trace_event>& e, std::size_t n, std::size_t m) {
  ASSERT_LT(std::max(n, m), e.size());
  EXPECT_EQ(e[n].id, e[m].id) << "events " << n << " and " << m;
}

bool destructor_callbacks_deferred() {
  static const bool deferred = [] {
    run_result r = run_driver("platforms", {});
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return r.stderr_text.find("destructor callbacks: deferred") != std::string::npos;
  }();
  return deferred;
}

TEST(LayerOverIcd, RunsOverTheExpectedPlatform) {
  run_result r = run_driver("platforms", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("layer_driver: platform: "), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find(platform), std::string::npos) << r.stderr_text;
}

TEST(LayerOverIcd, BuffersSubBuffersAndRetainAreFreedAtRealDestruction) {
  run_result r = run_driver("lifecycle", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<trace_event> e;
  std::vector<std::string> expected = {
      "alloc 4096 buffer 0x1", "alloc 8192 host 0x11", "alloc 1024 sub 0x4",
      "free 1024 sub 0x4",     "free 4096 buffer 0x1", "free 8192 host 0x11",
      "alloc 2048 buffer 0x2", "free 2048 buffer 0x2",
  };
  // 1 TiB: refused by a device that enforces CL_DEVICE_MAX_MEM_ALLOC_SIZE (alloc_failed); created
  // by one that does not (NVIDIA's driver, mockcl with the nvidia profile), and then released.
  if (r.stderr_text.find("1099511627776-byte buffer created") != std::string::npos) {
    expected.push_back("alloc 1099511627776 buffer 0x1");
    expected.push_back("free 1099511627776 buffer 0x1");
  } else {
    EXPECT_NE(r.stderr_text.find("1099511627776-byte buffer refused"), std::string::npos)
        << r.stderr_text;
    expected.push_back("alloc_failed 1099511627776 buffer 0x1");
  }
  // The reader checks that every free names a live block; with the driver's order, also which.
  if (expect_events(summary(r, &e), expected)) {
    expect_same_block(e, 0, 4);
    expect_same_block(e, 6, 7);
    if (e.size() == 10) expect_same_block(e, 8, 9);
  }
}

TEST(LayerOverIcd, BufferUsedByQueuedCommandIsFreedAfterTheCommand) {
  run_result r = run_driver("deferred", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<trace_event> e;
  EXPECT_EQ(summary(r, &e), (std::vector<std::string>{
                                "alloc 1048576 buffer 0x1",
                                "alloc 4096 buffer 0x1",
                                "free 1048576 buffer 0x1",
                                "free 4096 buffer 0x1",
                            }));
  expect_same_block(e, 0, 2);
}

// The program's release where a queued command holds the buffer, and its wait while the buffer
// awaits the driver's free; none for a release that is not the program's last, nor where the
// driver destroys the buffer during the program's call (one moment: its `free`).
TEST(LayerOverIcd, TheProgramsReleaseAndWaitBesideTheDriversFree) {
  run_result r = run_driver("release_wait", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<trace_event> e;
  std::vector<std::string> expected = {
      "alloc 1048576 buffer 0x1", "release 1048576 buffer 0x1", "wait 0 buffer 0x0",
      "alloc 4096 buffer 0x1",    "free 4096 buffer 0x1",       "free 1048576 buffer 0x1",
  };
  if (destructor_callbacks_deferred())
    expected.insert(expected.begin() + 4, "release 4096 buffer 0x1");
  EXPECT_EQ(summary(r, &e, /*releases=*/true), expected);
  ASSERT_EQ(e.size(), expected.size());
  expect_same_block(e, 0, 1);
  expect_same_block(e, 0, e.size() - 1);
  EXPECT_EQ(e[2].queue, 0u);  // clWaitForEvents: no queue
  EXPECT_EQ(e[2].id, 0u);
}

// A parent released while its sub-buffer lives is the program's until the sub-buffer goes: its
// `release` comes after the sub-buffer's, so a replay freeing at release keeps it that long.
TEST(LayerOverIcd, AParentsReleaseComesAfterItsSubBuffers) {
  run_result r = run_driver("sub_release", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<trace_event> e;
  const std::vector<std::string> expected =
      destructor_callbacks_deferred()
          ? std::vector<std::string>{"alloc 1048576 buffer 0x1", "alloc 4096 sub 0x1",
                                     "release 4096 sub 0x1",     "release 1048576 buffer 0x1",
                                     "free 4096 sub 0x1",        "free 1048576 buffer 0x1"}
          : std::vector<std::string>{"alloc 1048576 buffer 0x1", "alloc 4096 sub 0x1",
                                     "free 4096 sub 0x1", "release 1048576 buffer 0x1",
                                     "free 1048576 buffer 0x1"};
  EXPECT_EQ(summary(r, &e, /*releases=*/true), expected);
  ASSERT_EQ(e.size(), expected.size());
  expect_same_block(e, 0, e.size() - 1);
  expect_same_block(e, 0, e.size() - 2);
}

TEST(LayerOverIcd, SvmFreesAreRecordedAtExecution) {
  run_result r = run_driver("svm", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<trace_event> e;
  EXPECT_EQ(summary(r, &e), (std::vector<std::string>{
                                "alloc 1048576 svm 0x1",
                                "free 1048576 svm 0x1",
                                "alloc 65536 svm 0x1",
                                "alloc 4096 svm 0x1",
                                "free 65536 svm 0x1",
                                "alloc 8192 svm 0x1",
                                "free 8192 svm 0x1",
                                "free 4096 svm 0x1",
                            }));
  ASSERT_EQ(e.size(), 8u);
  EXPECT_EQ(e[1].queue, 0u);  // clSVMFree: no queue
  EXPECT_EQ(e[4].queue, 1u);  // clEnqueueSVMFree on the first queue the layer saw
  EXPECT_EQ(e[6].queue, 1u);
  expect_same_block(e, 2, 4);
  expect_same_block(e, 3, 7);
  // clEnqueueSVMFree is the program's release, at the call; clSVMFree is both moments.
  const std::vector<std::string> with = summary(r, nullptr, /*releases=*/true);
  const auto at = [&with](const std::string& line) {
    return std::find(with.begin(), with.end(), line) - with.begin();
  };
  EXPECT_LT(at("release 65536 svm 0x1"), at("alloc 4096 svm 0x1"));
  EXPECT_LT(at("release 8192 svm 0x1"), at("free 8192 svm 0x1"));
  EXPECT_EQ(std::count(with.begin(), with.end(), "release 1048576 svm 0x1"), 0);
}

TEST(LayerOverIcd, BudgetIsEnforcedAndCreditedAtRealDestruction) {
  run_result r = run_driver("budget", {{"CLPOOL_LAYER_BUDGET", "1MiB"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<trace_event> e;
  expect_events(summary(r, &e), (std::vector<std::string>{
                                    "alloc 524288 buffer 0x1",
                                    "alloc 524288 svm 0x1",
                                    "alloc_failed 1 buffer 0x1",
                                    "alloc_failed 1 svm 0x1",
                                    "alloc 4194304 host 0x11",
                                    "alloc_failed 524288 buffer 0x1",
                                    "free 524288 buffer 0x1",
                                    "alloc 524288 buffer 0x1",
                                    "free 524288 buffer 0x1",
                                    "free 4194304 host 0x11",
                                    "free 524288 svm 0x1",
                                }));
  clpool::trace::read_result read = clpool::trace::read_all(r.trace_path);
  bool has_budget = false;
  for (const auto& [key, value] : read.metadata) {
    if (key == "budget") has_budget = value == "1048576";
  }
  EXPECT_TRUE(has_budget);
}

// CLPOOL_LAYER_PROFILE=nvidia: buffers are charged, in 2 MiB pages, by their first enqueue, and
// the enqueue that does not fit fails (the driver checks the status; see layer_driver first_use).
TEST(LayerOverIcd, ANvidiaProfileChargesAtFirstUse) {
  run_result r = run_driver("first_use",
                            {{"CLPOOL_LAYER_BUDGET", "8MiB"}, {"CLPOOL_LAYER_PROFILE", "nvidia"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(summary(r), (std::vector<std::string>{
                            "alloc 2097152 buffer 0x1",
                            "alloc 2097152 buffer 0x1",
                            "alloc 2097152 buffer 0x1",
                            "free 2097152 buffer 0x1",
                            "free 2097152 buffer 0x1",
                            "free 2097152 buffer 0x1",
                        }));
  // Version 4: each charge at first use is a use event (the refused one too, then its retry),
  // with the kinds the comment names.
  EXPECT_EQ(summary(r, nullptr, false, /*uses=*/true),
            (std::vector<std::string>{
                "alloc 2097152 buffer 0x1", "alloc 2097152 buffer 0x1", "alloc 2097152 buffer 0x1",
                "use 2097152 buffer 0x1", "use 2097152 buffer 0x1", "use 2097152 buffer 0x1",
                "use 2097152 buffer 0x1", "free 2097152 buffer 0x1", "use 2097152 buffer 0x1",
                "free 2097152 buffer 0x1", "free 2097152 buffer 0x1"}));
  const clpool::trace::read_result read = clpool::trace::read_all(r.trace_path);
  EXPECT_NE(std::find(read.metadata.begin(), read.metadata.end(),
                      std::pair<std::string, std::string>("first_uses", "buffer")),
            read.metadata.end());
  std::ifstream in(r.trace_path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("# failure: first use of id 3 (2097152 bytes) by clEnqueueWriteBuffer: "
                            "status -4 from the layer: budget 8388608 bytes, 4194304 committed "
                            "(nvidia profile)"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("first use of id 3 (2097152 bytes) by clEnqueueNDRangeKernel"),
            std::string::npos);
}

// The rect transfers, SVM commands and SVM kernel arguments are first uses too, and a charge
// whose enqueue the driver rejects is given back (the driver checks each status).
TEST(LayerOverIcd, RectTransfersAreFirstUses) {
  run_result r = run_driver("first_use_rect",
                            {{"CLPOOL_LAYER_BUDGET", "8MiB"}, {"CLPOOL_LAYER_PROFILE", "nvidia"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::string text = [&] {
    std::ifstream in(r.trace_path);
    std::stringstream t;
    t << in.rdbuf();
    return t.str();
  }();
  for (const char* call :
       {"clEnqueueWriteBufferRect", "clEnqueueReadBufferRect", "clEnqueueCopyBufferRect"}) {
    EXPECT_NE(text.find(std::string("first use of id 3 (2097152 bytes) by ") + call),
              std::string::npos)
        << call << "\n"
        << text;
  }
}

// A profile whose svm_oom_at is first_use (nvidia's values otherwise): SVM blocks are charged by
// their first use, as buffers are.
TEST(LayerOverIcd, SvmCommandsAndSvmKernelArgumentsAreFirstUses) {
  const std::string profile = tmpdir() + "/svm_first_use.profile";
  std::ofstream(profile) << "name = svm_first_use\noom_at = first_use\nsvm_oom_at = first_use\n"
                            "headroom = 2688KiB\npage = 2MiB\npack_limit = 2MiB\n"
                            "pack_granule = 512B\nmax_alloc_enforced = no\n";
  run_result r = run_driver("first_use_svm",
                            {{"CLPOOL_LAYER_BUDGET", "8MiB"}, {"CLPOOL_LAYER_PROFILE", profile}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(summary(r), (std::vector<std::string>{
                            "alloc 2097152 svm 0x1",
                            "alloc 2097152 svm 0x1",
                            "alloc 2097152 svm 0x1",
                            "free 2097152 svm 0x1",
                            "free 2097152 svm 0x1",
                            "free 2097152 svm 0x1",
                        }));
  std::ifstream in(r.trace_path);
  std::stringstream text;
  text << in.rdbuf();
  for (const char* call : {"clEnqueueSVMMemcpy", "clEnqueueSVMMemFill", "clEnqueueSVMMap",
                           "clEnqueueSVMMigrateMem", "clEnqueueNDRangeKernel"}) {
    EXPECT_NE(text.str().find(std::string("first use of id 3 (2097152 bytes) by ") + call),
              std::string::npos)
        << call << "\n"
        << text.str();
  }
}

// The nvidia profile's SVM blocks are charged at clSVMAlloc (svm_oom_at = creation): the one that
// does not fit is refused there, recorded as alloc_failed with the budget as its reason.
TEST(LayerOverIcd, ANvidiaProfileRefusesSvmAtAllocation) {
  run_result r = run_driver("svm_at_creation",
                            {{"CLPOOL_LAYER_BUDGET", "8MiB"}, {"CLPOOL_LAYER_PROFILE", "nvidia"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(summary(r), (std::vector<std::string>{
                            "alloc 2097152 svm 0x1",
                            "alloc 2097152 svm 0x1",
                            "alloc_failed 2097152 svm 0x1",
                            "free 2097152 svm 0x1",
                            "alloc 2097152 svm 0x1",
                            "free 2097152 svm 0x1",
                            "free 2097152 svm 0x1",
                        }));
  std::ifstream in(r.trace_path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer: budget "
                            "8388608 bytes, 4194304 outstanding (nvidia profile)"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("first use"), std::string::npos) << text.str();
}

std::string trace_text(const run_result& r) {
  std::ifstream in(r.trace_path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A buffer above the CL_DEVICE_MAX_MEM_ALLOC_SIZE the layer reports (the budget): where the
// profile enforces that limit (none, i.e. exact; pocl) the layer answers CL_INVALID_BUFFER_SIZE
// at creation, recorded as the driver's would be; nvidia's does not enforce it, so the buffer is
// created and its first use fails for lack of room (layer_driver max_alloc checks each status).
TEST(LayerOverIcd, ABufferAboveTheReportedMaxAllocFollowsTheProfile) {
  for (const char* profile : {"", "pocl"}) {
    std::map<std::string, std::string> vars = {{"CLPOOL_LAYER_BUDGET", "8MiB"}};
    if (*profile != '\0') vars["CLPOOL_LAYER_PROFILE"] = profile;
    run_result r = run_driver("max_alloc", vars);
    ASSERT_EQ(r.exit_code, 0) << profile << ": " << r.stderr_text;
    EXPECT_EQ(summary(r), (std::vector<std::string>{
                              "alloc_failed 16777216 buffer 0x1",
                              "alloc 1048576 buffer 0x1",
                              "free 1048576 buffer 0x1",
                          }))
        << profile;
    EXPECT_NE(trace_text(r).find("status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above "
                                 "CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8388608 bytes"),
              std::string::npos)
        << profile << ": " << trace_text(r);
    // Its comment reads as a size refusal of that event by the rule the replay, trace_summary and
    // the pytest plugin share (trace::is_size_refusal), so none of them takes it for memory.
    const clpool::trace::read_result read = clpool::trace::read_all(r.trace_path);
    const auto failed = std::find_if(read.events.begin(), read.events.end(), [](const auto& e) {
      return e.action == clpool::trace::trace_action::alloc_failed;
    });
    ASSERT_NE(failed, read.events.end()) << profile;
    int refusals = 0;
    for (const auto& [key, value] : read.metadata) {
      refusals += key == "failure" && clpool::trace::is_size_refusal(*failed, value);
    }
    EXPECT_EQ(refusals, 1) << profile << ": " << trace_text(r);
  }
  run_result r = run_driver("max_alloc",
                            {{"CLPOOL_LAYER_BUDGET", "8MiB"}, {"CLPOOL_LAYER_PROFILE", "nvidia"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(summary(r), (std::vector<std::string>{
                            "alloc 16777216 buffer 0x1",
                            "free 16777216 buffer 0x1",
                            "alloc 1048576 buffer 0x1",
                            "free 1048576 buffer 0x1",
                        }));
  EXPECT_EQ(trace_text(r).find("CL_INVALID_BUFFER_SIZE"), std::string::npos) << trace_text(r);
  EXPECT_NE(trace_text(r).find("first use of id 1 (16777216 bytes) by clEnqueueFillBuffer: "
                               "status -4 from the layer"),
            std::string::npos)
      << trace_text(r);
}

// clSVMAlloc with invalid arguments (size 0, conflicting or unknown flags, atomics without
// fine-grain, an alignment not a power of two) returns NULL and is no out-of-memory: nothing is
// recorded. A size above the reported max alloc, where the profile enforces it, is a refusal for
// its size, recorded as a buffer's is (alloc_failed, status -61), whether the layer answers it
// (a budget) or the driver does (1 TiB, above the driver's own). Under nvidia's profile, which does
// not enforce the limit, the block above it is a real refusal of the budget: an out-of-memory.
TEST(LayerOverIcd, InvalidSvmArgumentsAreNotRecordedAsOutOfMemory) {
  for (bool budget : {false, true}) {
    std::map<std::string, std::string> vars;
    if (budget) vars["CLPOOL_LAYER_BUDGET"] = "8MiB";
    run_result r = run_driver("svm_invalid", vars);
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    const std::string text = trace_text(r);
    const std::vector<std::string> lines = summary(r);
    const std::string big = budget ? "16777216" : "1099511627776";
    // The one recorded failure is the size refusal.
    std::vector<std::string> failed;
    std::copy_if(lines.begin(), lines.end(), std::back_inserter(failed),
                 [](const std::string& l) { return l.rfind("alloc_failed", 0) == 0; });
    EXPECT_EQ(failed, std::vector<std::string>{"alloc_failed " + big + " svm 0x1"}) << text;
    EXPECT_NE(text.find(budget ? "status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above "
                                 "CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8388608 bytes"
                               : "status -61 (CL_INVALID_BUFFER_SIZE) from the driver: clSVMAlloc "
                                 "returned NULL above CL_DEVICE_MAX_MEM_ALLOC_SIZE"),
              std::string::npos)
        << text;
    if (budget) {
      EXPECT_EQ(lines, (std::vector<std::string>{"alloc_failed 16777216 svm 0x1",
                                                 "alloc 1048576 svm 0x1", "free 1048576 svm 0x1"}));
    } else {  // the driver answered: what it allocated is recorded, what it refused is not
      EXPECT_NE(std::find(lines.begin(), lines.end(), "alloc 1048576 svm 0x1"), lines.end());
    }
  }
  run_result r = run_driver("svm_invalid",
                            {{"CLPOOL_LAYER_BUDGET", "8MiB"}, {"CLPOOL_LAYER_PROFILE", "nvidia"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(summary(r),
            (std::vector<std::string>{"alloc_failed 16777216 svm 0x1", "alloc 1048576 svm 0x1",
                                      "free 1048576 svm 0x1"}));
  EXPECT_NE(trace_text(r).find("status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer: "
                               "budget 8388608 bytes"),
            std::string::npos)
      << trace_text(r);
}

TEST(LayerOverIcd, AChargeIsGivenBackWhenTheDriverRejectsTheEnqueue) {
  run_result r = run_driver("first_use_rollback",
                            {{"CLPOOL_LAYER_BUDGET", "8MiB"}, {"CLPOOL_LAYER_PROFILE", "nvidia"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::ifstream in(r.trace_path);
  std::stringstream text;
  text << in.rdbuf();
  // Only b's valid write failed for lack of room; c's fill fitted because b's rejected write had
  // given its charge back.
  EXPECT_NE(text.str().find("first use of id 2 (2097152 bytes) by clEnqueueWriteBuffer"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("by clEnqueueFillBuffer"), std::string::npos) << text.str();
}

TEST(LayerOverIcd, FailNthInjectsOneFailure) {
  run_result r = run_driver("fail_nth", {{"CLPOOL_LAYER_FAIL_NTH", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(summary(r), (std::vector<std::string>{
                            "alloc 100 buffer 0x1",
                            "alloc_failed 200 buffer 0x1",
                            "alloc 300 buffer 0x1",
                            "free 100 buffer 0x1",
                            "free 300 buffer 0x1",
                        }));
}

TEST(LayerOverIcd, ConcurrentThreadsGiveAValidTrace) {
  run_result r = run_driver("threads", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::vector<trace_event> e;
  const std::vector<std::string> lines = summary(r, &e);  // the reader checks ids and seq order
  std::map<std::string, int> count;
  for (const std::string& line : lines) ++count[line];
  for (int t = 1; t <= 4; ++t) {
    const std::string size = std::to_string(4096 * t);
    EXPECT_EQ(count["alloc " + size + " buffer 0x1"], 200) << size;
    EXPECT_EQ(count["free " + size + " buffer 0x1"], 200) << size;
  }
  // A driver may refuse clSVMAlloc under concurrency (NVIDIA's did): every refusal is recorded as
  // alloc_failed, and every block it gave is freed.
  EXPECT_EQ(count["alloc 256 svm 0x1"] + count["alloc_failed 256 svm 0x1"], 800);
  EXPECT_EQ(count["free 256 svm 0x1"], count["alloc 256 svm 0x1"]);
  std::uint64_t max_thread = 0;
  for (const trace_event& event : e) max_thread = std::max(max_thread, event.thread);
  EXPECT_GE(max_thread, 3u);  // four application threads, numbered densely from 0
}

TEST(LayerOverIcd, WithoutTraceTheLayerStillEnforcesAndSaysItIsNotRecording) {
  run_result r = run_driver("fail_nth", {{"CLPOOL_LAYER_FAIL_NTH", "2"}}, /*record=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("CLPOOL_LAYER_TRACE is not set"), std::string::npos)
      << r.stderr_text;
}

// However the program ends, the trace holds every event recorded before the end, and reads
// without error with the strict reader. layer_driver end_<how> records 15000 create+release
// pairs (sizes 4096 + i), waits until the last free is in the trace, then ends.
struct ending {
  std::string how;
  int exit_code;  // -1: any non-zero (a crash: under ASan the status is ASan's)
  bool trimmed;   // the layer's atexit handler ran: the file ends at its last line
};

class Ending : public testing::TestWithParam<ending> {};

TEST_P(Ending, TheTraceHoldsEveryEventRecordedBeforeIt) {
  constexpr int pairs = 15000;
  const ending& end = GetParam();
  run_result r = run_driver("end_" + end.how, {});
  if (end.exit_code >= 0) {
    EXPECT_EQ(r.exit_code, end.exit_code) << r.stderr_text;
  } else {
    EXPECT_NE(r.exit_code, 0) << r.stderr_text;
  }
  EXPECT_EQ(r.stderr_text.find("layer_driver:"), std::string::npos) << r.stderr_text;
  std::vector<trace_event> e;
  const std::vector<std::string> lines = summary(r, &e);  // no read error, ids and seq checked
  std::map<std::string, int> count;
  for (const std::string& line : lines) ++count[line];
  int missing = 0;
  for (int i = 0; i < pairs; ++i) {
    const std::string size = std::to_string(4096 + i);
    missing += count["alloc " + size + " buffer 0x1"] != 1;
    missing += count["free " + size + " buffer 0x1"] != 1;
  }
  EXPECT_EQ(missing, 0);
  if (end.how.find("static_destruction") != std::string::npos) {
    // Freed by a destructor callback during static destruction, after the layer's atexit handler.
    ASSERT_EQ(lines.size(), 2u * pairs + 2);
    EXPECT_EQ(lines.front(), "alloc 49380 buffer 0x1");
    EXPECT_EQ(lines.back(), "free 49380 buffer 0x1");
  } else {
    EXPECT_EQ(lines.size(), 2u * pairs);
  }
  std::ifstream in(r.trace_path, std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GT(raw.size(), std::size_t{1} << 20) << "more than one chunk of the mapped file";
  if (end.trimmed) {
    EXPECT_EQ(raw.find('\0'), std::string::npos) << "an exit trims the zero-filled tail";
    EXPECT_EQ(raw.back(), '\n');
  } else {
    // Nothing ran after the kill: the file ends in the zeros of its last chunk, which the reader
    // ignored above.
    EXPECT_EQ(raw.size() % (std::size_t{1} << 20), 0u);
    EXPECT_EQ(raw.back(), '\0');
  }
}

INSTANTIATE_TEST_SUITE_P(Layer, Ending,
                         testing::Values(ending{"return", 0, true}, ending{"exit_thread", 3, true},
                                         ending{"local_static_destruction", 0, true},
#ifdef DRIVER_OUTLIVES_STATIC_DESTRUCTION  // see layer_driver.cc, static_holder
                                         ending{"static_destruction", 0, true},
#endif
                                         ending{"_exit", 4, false}, ending{"abort", -1, false},
                                         ending{"segv", -1, false},
                                         ending{"sigkill", 128 + SIGKILL, false}),
                         [](const testing::TestParamInfo<ending>& info) {
                           return info.param.how == "_exit" ? std::string("underscore_exit")
                                                            : info.param.how;
                         });

// Each bad setting must stop the program with a message naming the variable.
struct bad_setting {
  std::string name;
  std::string value;
  std::string expected_message;
};

class BadSetting : public testing::TestWithParam<bad_setting> {};

TEST_P(BadSetting, ProgramFailsWithAClearMessage) {
  const bad_setting& b = GetParam();
  run_result r = run_driver("platforms", {{b.name, b.value}});
  EXPECT_NE(r.exit_code, 0) << "the program ran despite " << b.name << "=" << b.value;
  EXPECT_NE(r.stderr_text.find("clpool_layer: error: " + b.name), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find(b.expected_message), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("clGetPlatformIDs failed: -1001"), std::string::npos)
      << r.stderr_text;
}

INSTANTIATE_TEST_SUITE_P(
    Layer, BadSetting,
    testing::Values(bad_setting{"CLPOOL_LAYER_BUDGET", "2GB",
                                "\"2GB\" is ambiguous: decimal units are not accepted; write 2GiB"},
                    bad_setting{"CLPOOL_LAYER_BUDGET", "0", "greater than 0"},
                    bad_setting{"CLPOOL_LAYER_BUDGET", "-1GiB", "is negative"},
                    bad_setting{"CLPOOL_LAYER_FAIL_NTH", "zero", "not a non-negative"},
                    bad_setting{"CLPOOL_LAYER_FAIL_PROB", "2", "between 0 and 1"},
                    bad_setting{"CLPOOL_LAYER_SEED", "5", "CLPOOL_LAYER_FAIL_PROB is not"},
                    bad_setting{"CLPOOL_LAYER_TRACE", "", "is empty"},
                    bad_setting{"CLPOOL_LAYER_TRACE", "/nonexistent-dir/x.trace",
                                "No such file or directory"},
                    bad_setting{"CLPOOL_LAYER_BUGDET", "1GiB", "not a setting"}));

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: layer_test LAYER_SO DRIVER PLATFORM [ICD]\n");
    return 2;
  }
  layer_so = absolute(argv[1]);
  driver = absolute(argv[2]);
  platform = argv[3];
  if (argc == 5) icd = absolute(argv[4]);
  return RUN_ALL_TESTS();
}
