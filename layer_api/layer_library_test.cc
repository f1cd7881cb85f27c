#include "layer_api/layer_library.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace clpool::layer {
namespace {

TEST(LayerLibrary, TheClpoolLayerIsALayer) {
  const char* so = std::getenv("LAYER_SO");
  ASSERT_NE(so, nullptr);
  EXPECT_EQ(layer_library_refusal("--layer", so), "");
}

TEST(LayerLibrary, ATextFileIsNotALibrary) {
  const std::string m = layer_library_refusal("--layer", "/etc/passwd");
  EXPECT_EQ(m.rfind("--layer: '/etc/passwd' is not a loadable library (", 0), 0u) << m;
}

TEST(LayerLibrary, AnOrdinaryLibraryIsNotALayer) {
  const std::string libm = "/lib/x86_64-linux-gnu/libm.so.6";
  EXPECT_EQ(layer_library_refusal("--layer", libm),
            "--layer: '" + libm +
                "' is not an OpenCL layer: it does not export clGetLayerInfo, clInitLayer");
}

// `--layer l.so` names the file in the current directory; dlopen("l.so") would search the
// library path instead and say "No such file".
TEST(LayerLibrary, ANameWithoutASlashIsAFileHere) {
  const char* so = std::getenv("LAYER_SO");
  ASSERT_NE(so, nullptr);
  const std::string dir = std::getenv("TEST_TMPDIR");
  {
    std::ifstream in(so, std::ios::binary);
    std::ofstream out(dir + "/l.so", std::ios::binary);
    out << in.rdbuf();
  }
  char old[4096];
  ASSERT_NE(getcwd(old, sizeof old), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  EXPECT_EQ(layer_library_refusal("--layer", "l.so"), "");
  EXPECT_NE(layer_library_refusal("--layer", "libm.so.6")
                .find("'libm.so.6' is not a loadable library (cannot be read: No such file"),
            std::string::npos);
  ASSERT_EQ(chdir(old), 0);
}

// A library cut short made dlopen die of SIGBUS; it is refused from its headers.
TEST(LayerLibrary, ATruncatedLayerIsRefused) {
  const char* so = std::getenv("LAYER_SO");
  ASSERT_NE(so, nullptr);
  std::ifstream in(so, std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  for (std::size_t size : {1000u, 5000u, 100000u}) {
    const std::string cut = std::string(std::getenv("TEST_TMPDIR")) + "/t.so";
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, size);
    const std::string m = layer_library_refusal("--layer", cut);
    EXPECT_NE(m.find("is not a loadable library (truncated or corrupt: "), std::string::npos)
        << size << ": " << m;
  }
}

TEST(LayerLibrary, MissingAndEmptyFiles) {
  EXPECT_NE(layer_library_refusal("--layer", "/no/such/layer.so").find("is not a loadable library"),
            std::string::npos);
  const std::string empty = std::string(std::getenv("TEST_TMPDIR")) + "/empty.so";
  std::ofstream{empty};
  EXPECT_NE(layer_library_refusal("--layer", empty).find("is not a loadable library"),
            std::string::npos);
}

}  // namespace
}  // namespace clpool::layer
