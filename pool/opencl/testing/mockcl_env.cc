// Linked into a test binary (alwayslink), this points the ICD loader at mockcl and POCL before
// the first OpenCL call, so the same device-parameterised tests run on the mock's device(s) too.
// The binary needs data = ["//mockcl:libmockcl.so"] and env LIBMOCKCL_SO = its rootpath.
#include "mockcl/testing.h"

namespace {
const bool installed = [] {
  mockcl::testing::use_mock_and_pocl(mockcl::testing::mock_so_path());
  return true;
}();
}  // namespace
