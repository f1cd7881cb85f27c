// A trace's summary reads the same from its text and its binary form, where the layer's failure
// comments are comments in one and metadata records in the other: a refused first use (version 4)
// and size refusals.
#include "trace/trace_summary.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "trace/trace_writer.h"

namespace clpool::trace {
namespace {

// The summary of the trace `write` writes, in `encoding`, to a file named `name` (.bin or .trace
// added).
template <class Write>
std::string summary_of(trace_encoding encoding, const std::string& name, unsigned version,
                       Write write) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name +
                           (encoding == trace_encoding::binary ? ".bin" : ".trace");
  {
    std::ofstream file(path, std::ios::binary);
    trace_writer w(file, encoding, version);
    write(w);
  }
  std::FILE* out = std::tmpfile();
  EXPECT_TRUE(print_trace_summary(path, out, stderr));
  std::rewind(out);
  std::string text;
  for (int c; (c = std::fgetc(out)) != EOF;) text += static_cast<char>(c);
  std::fclose(out);
  return text;
}

// A version-4 trace whose first use of block 1 was refused.
std::string refused_summary_of(trace_encoding encoding) {
  return summary_of(encoding, "refused", first_use_format_version, [](trace_writer& w) {
    w.comment("first_uses", "buffer");
    w.write({.seq = 0, .action = trace_action::alloc, .id = 1, .size = 8 << 20});
    w.write({.seq = 1, .action = trace_action::use, .id = 1, .size = 8 << 20});
    w.comment("failure",
              "first use of id 1 (8388608 bytes) by clEnqueueFillBuffer: status -4 from the layer");
    w.write({.seq = 2, .action = trace_action::alloc, .id = 2, .size = 1 << 20});
    w.write({.seq = 3, .action = trace_action::use, .id = 2, .size = 1 << 20});
    w.write({.seq = 4, .action = trace_action::free, .id = 2, .size = 1 << 20});
    w.write({.seq = 5, .action = trace_action::free, .id = 1, .size = 8 << 20});
  });
}

// A size refusal's comment after its alloc_failed, a -61 comment after another event (which is
// not that event's), and a -61 comment after an alloc_failed's first failure comment (not its).
std::string size_refusal_summary_of(trace_encoding encoding) {
  return summary_of(encoding, "size", format_version, [](trace_writer& w) {
    w.write({.seq = 0, .action = trace_action::alloc_failed, .id = 1, .size = 16 << 20});
    w.comment("failure", "seq 0 status -61 (CL_INVALID_BUFFER_SIZE) from the driver");
    w.write({.seq = 1, .action = trace_action::alloc, .id = 2, .size = 1 << 20});
    w.comment("failure", "seq 1 status -61 (CL_INVALID_BUFFER_SIZE) from the driver");
    w.write({.seq = 2, .action = trace_action::alloc_failed, .id = 3, .size = 1 << 20});
    w.comment("failure", "seq 2 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the driver");
    w.comment("failure", "seq 2 status -61 (CL_INVALID_BUFFER_SIZE): not the first, not its");
  });
}

TEST(TraceSummary, SizeRefusalsReadTheSameFromTextAndBinary) {
  const std::string text = size_refusal_summary_of(trace_encoding::text);
  EXPECT_NE(text.find("alloc_failed: 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("size_refusals: 1\n"), std::string::npos) << text;
  EXPECT_EQ(size_refusal_summary_of(trace_encoding::binary), text);
}

TEST(TraceSummary, ARefusedFirstUseReadsTheSameFromTextAndBinary) {
  const std::string text = refused_summary_of(trace_encoding::text);
  EXPECT_NE(text.find("first_use_failed: 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("peak_device_bytes_at_first_use: 1048576\n"), std::string::npos) << text;
  EXPECT_EQ(refused_summary_of(trace_encoding::binary), text);
}

// Host (pinned) blocks are in no device figure, and have a peak of their own; a trace cut off (the
// zero-filled rest of the layer's file) says so, one that is not does not.
TEST(TraceSummary, HostPeakAndACutOffTrace) {
  const std::string text = summary_of(trace_encoding::text, "host", 1, [](trace_writer& w) {
    w.write({.seq = 0, .action = trace_action::alloc, .id = 1, .size = 4096});
    w.write({.seq = 1,
             .action = trace_action::alloc,
             .id = 2,
             .size = 512 << 20,
             .kind = trace_kind::host});
    w.write({.seq = 2, .action = trace_action::free, .id = 2, .size = 512 << 20});
  });
  EXPECT_NE(text.find("peak_device_bytes: 4096\n"), std::string::npos) << text;
  EXPECT_NE(text.find("peak_host_bytes: 536870912\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("trace_end:"), std::string::npos) << text;
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/host.trace";
  std::ofstream(path, std::ios::app) << std::string(4096, '\0');
  std::FILE* out = std::tmpfile();
  EXPECT_TRUE(print_trace_summary(path, out, stderr));
  std::rewind(out);
  std::string cut;
  for (int c; (c = std::fgetc(out)) != EOF;) cut += static_cast<char>(c);
  std::fclose(out);
  EXPECT_NE(
      cut.find("\ntrace_end: cut off (it ends in the zero-filled rest of its recorder's file"),
      std::string::npos)
      << cut;
}

}  // namespace
}  // namespace clpool::trace
