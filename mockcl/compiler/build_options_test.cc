#include "mockcl/compiler/build_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mockcl {
namespace {

// The mock device's OpenCL C versions (language.h: 1.0 to 3.0).
const std::vector<cl_version> kVersions = {CL_MAKE_VERSION(1, 0, 0), CL_MAKE_VERSION(1, 1, 0),
                                           CL_MAKE_VERSION(1, 2, 0), CL_MAKE_VERSION(2, 0, 0),
                                           CL_MAKE_VERSION(3, 0, 0)};

std::string build(const std::string& options) {
  return invalid_build_option(options, kVersions, true);
}

// What real programs pass (OpenCL 3.0 sections 5.8.6 and 5.8.7, PyOpenCL's quoted include path,
// vendors' options) is taken: refusing one breaks a program that works on its driver.
TEST(BuildOptions, TakesEveryStandardOptionAndWhatClientsPass) {
  for (const char* o : {"",
                        "   ",
                        "-D X",
                        "-DX=1",
                        "-D X=\"a b\"",
                        "-I /usr/include",
                        "-I/usr/include",
                        "-I \"/a path/with spaces\" -I .",
                        "-I /a\\ path",
                        "-U X -UY",
                        "-cl-single-precision-constant -cl-denorms-are-zero",
                        "-cl-fp32-correctly-rounded-divide-sqrt -cl-opt-disable",
                        "-cl-strict-aliasing -cl-uniform-work-group-size -cl-no-subgroup-ifp",
                        "-cl-mad-enable -cl-no-signed-zeros -cl-no-signed-zeroes",
                        "-cl-unsafe-math-optimizations -cl-finite-math-only",
                        "-cl-fast-relaxed-math -cl-kernel-arg-info",
                        "-w -Werror -g",
                        "-cl-std=CL1.0",
                        "-cl-std=CL1.1",
                        "-cl-std=CL1.2",
                        "-cl-std=CL2.0",
                        "-cl-std=CL3.0",
                        "-cl-std=CL1.2 -cl-std=CL2.0",
                        "\t-cl-std=CL1.2\n-DA ",
                        "-create-library -enable-link-options",
                        "-Wall -Wno-unused -O3 -ffast-math -save-temps -s /tmp/k.cl -x spir",
                        "-cl-nv-verbose -cl-nv-maxrregcount=32 -nv-line-info",
                        "-cl-amd-x -cl-intel-greater-than-4GB-buffer-required -cl-arm-y"}) {
    EXPECT_EQ(build(o), "") << "options: '" << o << "'";
  }
}

// Each refused here POCL 3.1 refuses too (CL_INVALID_BUILD_OPTIONS, or a failed build).
TEST(BuildOptions, RefusesWhatNoCompilerTakes) {
  EXPECT_EQ(build("-bogus-option"), "'-bogus-option' is not an OpenCL build option");
  EXPECT_EQ(build("-cl-std=CL9.9"),
            "'-cl-std=CL9.9' names an OpenCL C version the device does not support");
  EXPECT_NE(build("-cl-std=CL2.1"), "");  // Not one of the device's versions.
  EXPECT_NE(build("-cl-std=cl1.2"), "");
  EXPECT_NE(build("-cl-std=CL"), "");
  EXPECT_NE(build("-cl-std=CLC++"), "");  // C++ for OpenCL: the device lists no such extension.
  EXPECT_NE(build("-cl-bogus"), "");
  EXPECT_NE(build("-cl-mad"), "");
  EXPECT_NE(build("-std=CL1.2"), "");
  EXPECT_EQ(build("-DA bogus"), "'bogus' is no option nor an option's argument");
  EXPECT_EQ(build("-w -D"), "'-D' needs an argument");
  EXPECT_NE(build("-I"), "");
  EXPECT_EQ(build("-I \"/a b"), "a quote in the options is never closed");
}

TEST(BuildOptions, LinkerOptionsOnlyWhereTheCallLinks) {
  EXPECT_EQ(invalid_build_option("-create-library", kVersions, true), "");
  EXPECT_NE(invalid_build_option("-create-library", kVersions, false), "");
  EXPECT_NE(invalid_build_option("-enable-link-options", kVersions, false), "");
  EXPECT_EQ(invalid_build_option("-cl-kernel-arg-info -DX", kVersions, false), "");
}

TEST(BuildOptions, TheDevicesVersionsDecide) {
  const std::vector<cl_version> only_12 = {CL_MAKE_VERSION(1, 2, 0)};
  EXPECT_EQ(invalid_build_option("-cl-std=CL1.2", only_12, true), "");
  EXPECT_NE(invalid_build_option("-cl-std=CL3.0", only_12, true), "");
}

}  // namespace
}  // namespace mockcl
