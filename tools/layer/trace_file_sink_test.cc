#include "tools/layer/trace_file_sink.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

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
  EXPECT_EQ(read(p).rfind("clpool-trace 1\n# source: layer\n", 0), 0u) << read(p);
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

}  // namespace
}  // namespace clpool::layer
