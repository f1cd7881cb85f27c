#include "layer_api/layer_library.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
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
  EXPECT_EQ(layer_library_refusal("--layer", "libm.so.6"),
            "--layer: 'libm.so.6' is not an OpenCL layer: it does not export clGetLayerInfo, clInitLayer");
}

TEST(LayerLibrary, MissingAndEmptyFiles) {
  EXPECT_NE(layer_library_refusal("--layer", "/no/such/layer.so").find("is not a loadable library"),
            std::string::npos);
  const std::string empty = std::string(std::getenv("TEST_TMPDIR")) + "/empty.so";
  std::ofstream{empty};
  EXPECT_NE(layer_library_refusal("--layer", empty).find("is not a loadable library"), std::string::npos);
}

}  // namespace
}  // namespace clpool::layer
