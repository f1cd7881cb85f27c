#include "tools/layer/trace_file_sink.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "trace/trace_reader.h"

namespace clpool::layer {
namespace {

std::string tmp(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  return std::string(t && *t ? t : "/tmp") + "/" + name;
}

std::string read(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

trace::trace_event alloc_event() {
  trace::trace_event e;
  e.seq = 1;
  e.action = trace::trace_action::alloc;
  e.id = 7;
  e.size = 4096;
  return e;
}

TEST(TraceFileSink, CreatesAMissingFile) {
  const std::string p = tmp("new.trace");
  unlink(p.c_str());
  std::string error;
  auto sink = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(sink, nullptr) << error;
  ASSERT_TRUE(sink->write(alloc_event()));
  // Flushed per event: complete without destroying the sink (a crash never destroys it).
  EXPECT_EQ(read(p).rfind("clpool-trace 3\n# source: layer\n", 0), 0u) << read(p).substr(0, 200);
  EXPECT_NE(read(p).find(" alloc 7 4096 "), std::string::npos);
}

TEST(TraceFileSink, NeverTruncatesAFileItDidNotWrite) {
  const std::string p = tmp("precious.csv");
  std::ofstream(p) << "Thread,Time,Action,Pointer,Size,Stream\n1,0,allocate,0x10,1,0\n";
  const std::string before = read(p);
  std::string error;
  EXPECT_EQ(open_trace_file(p, layer_settings{}, error), nullptr);
  EXPECT_NE(error.find("exists and is not a trace the layer wrote"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_EQ(read(p), before);
  // A clpool trace from another source (clpool_replay --write-trace) is not the layer's either.
  std::ofstream(p) << "clpool-trace 1\n# source: rmm csv x\n";
  EXPECT_EQ(open_trace_file(p, layer_settings{}, error), nullptr);
}

TEST(TraceFileSink, ReplacesItsOwnTraceAndEmptyFiles) {
  const std::string p = tmp("again.trace");
  std::ofstream(p) << "clpool-trace 1\n# source: layer\n0 0 0 0 alloc 1 99999 buffer 0x0\n";
  std::string error;
  auto sink = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(sink, nullptr) << error;
  EXPECT_EQ(read(p).find("99999"), std::string::npos) << "the old trace was not truncated";
  sink.reset();
  std::ofstream(p, std::ios::trunc).flush();
  EXPECT_NE(open_trace_file(p, layer_settings{}, error), nullptr) << error;
}

// trace_path_refusal asks the same rule before a run (clpool record), touching nothing.
// A trace another open file is writing is locked: a second opener (another process; here another
// open in this one, which flock treats alike) gets its own TRACE.PID and the first keeps writing
// a whole trace. Once the first is gone, the trace is replaced as before, or with keep_trace
// kept, the later opener again writing its own.
TEST(TraceFileSink, ATraceBeingWrittenIsNeverTruncatedOrShared) {
  const std::string p = tmp("shared.trace"), own = p + "." + std::to_string(getpid());
  unlink(p.c_str());
  unlink(own.c_str());
  std::string error;
  auto first = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(first, nullptr) << error;
  ASSERT_TRUE(first->write(alloc_event()));
  auto second = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(second, nullptr) << error;
  trace::trace_event e = alloc_event();
  e.id = 8;
  ASSERT_TRUE(second->write(e));
  e.id = 9;
  e.seq = 2;
  ASSERT_TRUE(first->write(e));
  EXPECT_NE(read(p).find(" alloc 7 4096 "), std::string::npos);
  EXPECT_NE(read(p).find(" alloc 9 4096 "), std::string::npos);
  EXPECT_EQ(read(p).find(" alloc 8 4096 "), std::string::npos);
  EXPECT_NE(read(own).find(" alloc 8 4096 "), std::string::npos) << read(own).substr(0, 200);
  second.reset();
  first.reset();
  unlink(own.c_str());
  layer_settings keep;
  keep.keep_trace = true;
  auto later = open_trace_file(p, keep, error);  // an earlier process's events: kept
  ASSERT_NE(later, nullptr) << error;
  EXPECT_NE(read(p).find(" alloc 9 4096 "), std::string::npos);
  EXPECT_EQ(read(own).rfind("clpool-trace 3\n", 0), 0u);
  later.reset();
  auto replacing = open_trace_file(p, layer_settings{}, error);  // without keep_trace: replaced
  ASSERT_NE(replacing, nullptr) << error;
  EXPECT_EQ(read(p).find(" alloc 9 4096 "), std::string::npos);
  unlink(own.c_str());
}

// keep_trace keeps a trace that holds events, not one a process left with its header alone (a
// step that only listed the platforms); TRACE.PID taken as well (a process exec'd from one that
// wrote it) gives TRACE.PID.1.
TEST(TraceFileSink, KeepTraceKeepsEventsAndFindsAFreeName) {
  const std::string p = tmp("keep.trace"), own = p + "." + std::to_string(getpid());
  for (const std::string& f : {p, own, own + ".1"}) unlink(f.c_str());
  std::string error;
  layer_settings keep;
  keep.keep_trace = true;
  open_trace_file(p, keep, error).reset();  // header and comments only
  auto first = open_trace_file(p, keep, error);
  ASSERT_NE(first, nullptr) << error;
  EXPECT_NE(access(p.c_str(), F_OK), -1);
  EXPECT_EQ(access(own.c_str(), F_OK), -1) << "a trace without events went to TRACE.PID";
  ASSERT_TRUE(first->write(alloc_event()));
  auto second = open_trace_file(p, keep, error);  // p is locked: TRACE.PID
  ASSERT_NE(second, nullptr) << error;
  ASSERT_TRUE(second->write(alloc_event()));
  second.reset();
  auto third = open_trace_file(p, keep, error);  // p locked, TRACE.PID holds events: .1
  ASSERT_NE(third, nullptr) << error;
  EXPECT_NE(read(own).find(" alloc 7 4096 "), std::string::npos) << "TRACE.PID was truncated";
  EXPECT_EQ(read(own + ".1").rfind("clpool-trace 3\n", 0), 0u);
  third.reset();
  first.reset();
  for (const std::string& f : {p, own, own + ".1"}) unlink(f.c_str());
}

// The errors file: created with its header, appended to when it begins with it, and a file that
// does not (the program's own, reached through /dev/fd/N when a launcher closed N) never touched.
TEST(TraceFileSink, TheErrorsFileIsOnlyOneTheHarnessMade) {
  const std::string e = tmp("errors.txt"), other = tmp("program_output.txt");
  unlink(e.c_str());
  EXPECT_TRUE(append_to_errors_file(e, "first\nline"));
  EXPECT_TRUE(append_to_errors_file(e, "second"));
  EXPECT_EQ(read(e), std::string(errors_file_header) + "first\\x0Aline\nsecond\n");
  std::ofstream(other) << "precious data\n";
  EXPECT_FALSE(append_to_errors_file(other, "note: ..."));
  EXPECT_EQ(read(other), "precious data\n");
  std::ofstream(other, std::ios::trunc).close();  // empty: a file the program just made
  EXPECT_FALSE(append_to_errors_file(other, "note: ..."));
  EXPECT_EQ(read(other), "");
  EXPECT_FALSE(append_to_errors_file("/dev/fd/987", "note: ..."));  // a closed descriptor
  unlink(e.c_str());
  unlink(other.c_str());
}

TEST(TraceFileSink, TracePathRefusalIsTheSameRule) {
  const std::string p = tmp("asked.trace");
  unlink(p.c_str());
  EXPECT_EQ(trace_path_refusal(p), "");
  EXPECT_EQ(trace_path_refusal("/dev/null"), "");
  std::ofstream(p).flush();
  EXPECT_EQ(trace_path_refusal(p), "");  // empty
  // The layer's traces of every version it wrote: 1 and 2 before version 3, 3 now.
  for (const char* ours : {"clpool-trace 1\n# source: layer\n", "clpool-trace 2\n# source: layer\n",
                           "clpool-trace 3\n# source: layer\n"}) {
    std::ofstream(p) << ours;
    EXPECT_EQ(trace_path_refusal(p), "") << ours;
  }
  for (const char* other : {"clpool-trace 1\n# source: rmm csv x\n",
                            "clpool-trace 3\n# source: clpool.record\n", "a,b\n", "clpool"}) {
    std::ofstream(p) << other;
    std::string error;
    EXPECT_EQ(open_trace_file(p, layer_settings{}, error), nullptr);
    EXPECT_EQ(trace_path_refusal(p), error) << other;
    EXPECT_EQ(read(p), other);
  }
}

TEST(TraceFileSink, DevicesAreWrittenAsTheyAre) {
  std::string error;
  auto sink = open_trace_file("/dev/null", layer_settings{}, error);
  ASSERT_NE(sink, nullptr) << error;
  EXPECT_TRUE(sink->write(alloc_event()));
}

TEST(TraceFileSink, UncreatableIsAnError) {
  std::string error;
  EXPECT_EQ(open_trace_file("/nonexistent/dir/t.trace", layer_settings{}, error), nullptr);
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

// The file as bytes (it may hold NULs).
std::string raw(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

trace::trace_event event(std::uint64_t seq) {
  trace::trace_event e = alloc_event();
  e.seq = seq;
  e.id = seq + 1;
  e.size = 4096 + seq;
  return e;
}

// Enough events for more than two of the mapped file's 1 MiB chunks.
constexpr std::uint64_t many = 60000;

TEST(TraceFileSink, EveryEventIsInTheFileWhileTheSinkLives) {
  const std::string p = tmp("mapped.trace");
  std::string error;
  auto sink = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(sink, nullptr) << error;
  for (std::uint64_t i = 0; i < many; ++i) ASSERT_TRUE(sink->write(event(i)));
  // As a crash would leave it: the events, then the zeros of the last chunk.
  const std::string bytes = raw(p);
  EXPECT_EQ(bytes.size(), 3 * trace_chunk_bytes);
  EXPECT_EQ(bytes.back(), '\0');
  trace::read_result r = trace::read_all(p);
  ASSERT_FALSE(r.error) << r.error->what();
  ASSERT_EQ(r.events.size(), many);
  for (std::uint64_t i = 0; i < many; ++i) ASSERT_EQ(r.events[i], event(i)) << i;
}

TEST(TraceFileSink, AtExitTheTailIsTrimmedAndLaterEventsStillLand) {
  const std::string p = tmp("exiting.trace");
  std::string error;
  auto sink = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(sink, nullptr) << error;
  for (std::uint64_t i = 0; i < many; ++i) ASSERT_TRUE(sink->write(event(i)));
  sink->process_exiting();
  EXPECT_EQ(raw(p).find('\0'), std::string::npos);
  // A destructor callback on a driver thread during static destruction.
  ASSERT_TRUE(sink->write(event(many)));
  ASSERT_TRUE(sink->comment("late", "yes"));
  const std::string bytes = raw(p);
  EXPECT_EQ(bytes.find('\0'), std::string::npos);
  trace::read_result r = trace::read_all(p);
  ASSERT_FALSE(r.error) << r.error->what();
  ASSERT_EQ(r.events.size(), many + 1);
  EXPECT_EQ(r.events.back(), event(many));
  EXPECT_EQ(r.metadata.back(), (std::pair<std::string, std::string>("late", "yes")));
}

TEST(TraceFileSink, DestroyingTheSinkTrimsTheTail) {
  const std::string p = tmp("destroyed.trace");
  std::string error;
  auto sink = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(sink, nullptr) << error;
  ASSERT_TRUE(sink->write(event(0)));
  sink.reset();
  EXPECT_EQ(raw(p).find('\0'), std::string::npos);
  EXPECT_EQ(trace::read_all(p).events.size(), 1u);
}

// Disk full, as a file size limit: the file cannot grow, write() says so, and the file keeps
// every event before the failure as a valid trace. In a child, for its own limit.
TEST(TraceFileSink, AFileThatCannotGrowKeepsAValidTrace) {
  const std::string p = tmp("full.trace");
  unlink(p.c_str());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{};
    getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = trace_chunk_bytes + trace_chunk_bytes / 2;
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(12);
    std::string error;
    auto sink = open_trace_file(p, layer_settings{}, error);
    if (sink == nullptr) _exit(10);
    std::uint64_t written = 0;
    while (written < many && sink->write(event(written))) ++written;
    // Later writes fail too, and nothing is appended.
    if (written == many) _exit(11);
    if (sink->write(event(written + 1))) _exit(13);
    std::FILE* out = std::fopen((p + ".count").c_str(), "w");
    std::fprintf(out, "%llu\n", static_cast<unsigned long long>(written));
    std::fclose(out);
    _exit(0);  // no destructor, no exit handler: the failure itself left the file valid
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const std::uint64_t written = std::stoull(read(p + ".count"));
  EXPECT_GT(written, 10000u);
  EXPECT_EQ(raw(p).find('\0'), std::string::npos);
  trace::read_result r = trace::read_all(p);
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_EQ(r.events.size(), written);
}

// A child made by fork() shares the file and its map: what it records must not land in the
// parent's trace, and its exit must not trim the parent's file.
TEST(TraceFileSink, AForkedChildWritesNothing) {
  const std::string p = tmp("forked.trace");
  std::string error;
  auto sink = open_trace_file(p, layer_settings{}, error);
  ASSERT_NE(sink, nullptr) << error;
  ASSERT_TRUE(sink->write(event(0)));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool ok = sink->write(event(1)) && sink->comment("child", "yes");
    sink->process_exiting();  // what its exit() would do
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (std::uint64_t i = 1; i < many; ++i) ASSERT_TRUE(sink->write(event(i)));
  trace::read_result r = trace::read_all(p);
  ASSERT_FALSE(r.error) << r.error->what();
  ASSERT_EQ(r.events.size(), many);
  for (const auto& [key, value] : r.metadata) EXPECT_NE(key, "child");
}

TEST(TraceFileSink, AFifoIsWrittenEventByEvent) {
  const std::string p = tmp("trace.fifo");
  unlink(p.c_str());
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  std::string text;
  std::thread reader([&] { text = read(p); });
  {
    std::string error;
    auto sink = open_trace_file(p, layer_settings{}, error);  // waits for the reader
    ASSERT_NE(sink, nullptr) << error;
    for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(sink->write(event(i)));
  }
  reader.join();
  trace::read_result r = trace::read_all_from_string(text);
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_EQ(r.events.size(), 1000u);
}

}  // namespace
}  // namespace clpool::layer
