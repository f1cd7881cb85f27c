#include "layer_api/trace_path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace clpool::layer {
namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

TEST(ReportPath, TakesNothingThereAnEmptyFileAReportOrADevice) {
  EXPECT_EQ(report_path_refusal("/no/such/dir/report"), "");
  EXPECT_EQ(report_path_refusal(temp_file("empty.report", "")), "");
  EXPECT_EQ(report_path_refusal("/dev/null"), "");
  for (const char* first : {"alloc 1 1 4096 buffer 0\n", "first_use 1 1 0 clEnqueueWriteBuffer\n",
                            "injected alloc 1 1\n", "exit live_blocks 0 live_bytes 0\n"})
    EXPECT_EQ(report_path_refusal(temp_file("ours.report", first)), "") << first;
}

TEST(ReportPath, RefusesAnyOtherFile) {
  for (const char* text :
       {"clpool-trace 3\n# source: layer\n", "import pyopencl\n", "a,b\n", "allocate\n", "exit\n",
        "\x7f"
        "ELF"}) {
    const std::string path = temp_file("other.txt", text);
    EXPECT_EQ(report_path_refusal(path),
              "\"" + path +
                  "\" exists and is not a report the layer wrote: not appending to it (remove it "
                  "or choose another path)")
        << text;
  }
}

}  // namespace
}  // namespace clpool::layer
