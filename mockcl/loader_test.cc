// Where point_loader_at() puts its vendors directory, and that it leaves nothing when it fails.
#include "mockcl/loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace mockcl::loader {
namespace {

namespace fs = std::filesystem;

// A fresh empty directory under the test's own temporary directory.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(std::getenv("TEST_TMPDIR")) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(Loader, VendorsDirectoryGoesUnderTmpdir) {
  const fs::path tmp = fresh_dir("tmpdir");
  ASSERT_EQ(setenv("TMPDIR", tmp.c_str(), 1), 0);
  EXPECT_EQ(temp_root(), tmp.string());
  std::string error;
  const std::string dir = point_loader_at("/some/libmockcl.so", false, error);
  ASSERT_FALSE(dir.empty()) << error;
  EXPECT_EQ(fs::path(dir).parent_path(), tmp);
  EXPECT_EQ(fs::path(dir).filename().string().rfind("mockcl-vendors-", 0), 0u) << dir;
  std::ifstream icd(dir + "/0-mockcl.icd");
  std::string line;
  std::getline(icd, line);
  EXPECT_EQ(line, "/some/libmockcl.so");
  EXPECT_EQ(std::string(std::getenv("OCL_ICD_VENDORS")), dir);
  fs::remove_all(dir);
}

TEST(Loader, WithoutTmpdirTheTestDirectoryThenTmp) {
  ASSERT_EQ(unsetenv("TMPDIR"), 0);
  const std::string test_tmpdir = std::getenv("TEST_TMPDIR");
  EXPECT_EQ(temp_root(), test_tmpdir);
  ASSERT_EQ(setenv("TMPDIR", "", 1), 0);  // empty counts as unset
  EXPECT_EQ(temp_root(), test_tmpdir);
  ASSERT_EQ(unsetenv("TEST_TMPDIR"), 0);
  EXPECT_EQ(temp_root(), "/tmp");
  ASSERT_EQ(setenv("TEST_TMPDIR", test_tmpdir.c_str(), 1), 0);
}

TEST(Loader, AnUnusableTmpdirIsNamedInTheError) {
  const fs::path missing = fresh_dir("parent") / "missing";
  ASSERT_EQ(setenv("TMPDIR", missing.c_str(), 1), 0);
  std::string error;
  EXPECT_EQ(point_loader_at("/some/libmockcl.so", false, error), "");
  EXPECT_NE(error.find("cannot create a temporary directory from " + missing.string() +
                       "/mockcl-vendors-XXXXXX"),
            std::string::npos)
      << error;
  EXPECT_EQ(entries(missing.parent_path()), 0u);
}

}  // namespace
}  // namespace mockcl::loader
