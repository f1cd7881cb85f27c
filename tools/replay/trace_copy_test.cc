// --write-trace's copy keeps what decides a replay: the events, the first_uses header, and each
// recorder's failure comment after its own event, in text and in binary.
#include "tools/replay/trace_copy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "replay/replay.h"

namespace clpool::replay_cli {
namespace {

std::string temp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

// A version-4 trace: a size refusal (seq 1), a refused first use (seq 3), an out-of-memory (seq 5)
// whose comment runs over 1024 bytes, and a comment that is no failure.
const std::string input_text =
    "clpool-trace 4\n"
    "# first_uses: buffer\n"
    "# device: pthread-pocl\n"
    "0 0 0 0 alloc 1 1048576 buffer 0\n"
    "1 0 0 0 alloc_failed 2 16777216 buffer 0\n"
    "# failure: seq 1 status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above "
    "CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8388608 bytes\n"
    "2 0 0 0 alloc 3 4194304 buffer 0\n"
    "3 0 0 0 use 3 4194304 buffer 0\n"
    "# failure: first use of id 3 (4194304 bytes) by clEnqueueFillBuffer: status -4 from the "
    "layer\n"
    "# note: not a failure\n"
    "4 0 0 0 free 3 4194304 buffer 0\n"
    "5 0 0 0 alloc_failed 4 6291456 buffer 0\n"
    "# failure: seq 5 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer: " +
    std::string(2000, 'x') +
    "\n"
    "6 0 0 0 free 1 1048576 buffer 0\n";

replay::replay_report replay_file(const std::string& path, std::uint64_t capacity) {
  trace::trace_reader reader(path, {.check_liveness = false});
  replay::replay_config nopool;
  nopool.use_pool = false;
  return replay::replay_stream(
      reader, nopool, replay::device_spec{capacity, device_model::alloc_semantics::deferred});
}

TEST(TraceCopy, KeepsEachFailureCommentAfterItsEvent) {
  const std::string in = temp("copy_in.trace");
  std::ofstream(in) << input_text;
  for (const auto encoding : {trace::trace_encoding::text, trace::trace_encoding::binary}) {
    const bool binary = encoding == trace::trace_encoding::binary;
    SCOPED_TRACE(binary ? "binary" : "text");
    const std::string out = temp(binary ? "copy_out.bin" : "copy_out.trace");
    {
      trace::trace_reader reader(in, {.check_liveness = false});
      copy_trace(reader, {.path = out,
                          .encoding = encoding,
                          .version = reader.version(),
                          .source = "clpool trace copy_in.trace"});
    }
    const trace::read_result original = trace::read_all(in);
    const trace::read_result copied = trace::read_all(out);
    ASSERT_FALSE(copied.error) << copied.error->what();
    EXPECT_EQ(copied.version, 4u);
    EXPECT_EQ(copied.events, original.events);
    std::vector<std::pair<std::string, std::string>> expected = {
        {"source", "clpool trace copy_in.trace"}, {"first_uses", "buffer"}};
    for (const auto& [key, value] : original.metadata) {
      if (key == "failure") expected.emplace_back(key, value.substr(0, 1024));
    }
    EXPECT_EQ(copied.metadata, expected);
    // Replayed, the copy reads as the input does: the size refusal is counted, the refused first
    // use is the recorded run's too.
    for (const std::uint64_t capacity : {std::uint64_t{8} << 20, std::uint64_t{4} << 20}) {
      const replay::replay_report a = replay_file(in, capacity), b = replay_file(out, capacity);
      EXPECT_EQ(b.recorded_size_refusals, 1u);
      EXPECT_EQ(b.recorded_size_refusals, a.recorded_size_refusals);
      EXPECT_EQ(b.ok(), a.ok()) << capacity;
      if (!a.ok() && !b.ok()) {
        EXPECT_EQ(b.oom->seq, a.oom->seq);
        EXPECT_EQ(b.oom->recorded_failure, a.oom->recorded_failure);
      }
    }
  }
}

}  // namespace
}  // namespace clpool::replay_cli
