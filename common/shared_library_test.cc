// A library the user names is read as ELF before anything maps it, and loaded first in a child:
// every cut of a real library, and every way its header can be wrong, is a sentence, never a
// signal in the test process.
#include "common/shared_library.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace clpool::common {
namespace {

const std::string good = "common/testing/libtiny.so";
const std::string crashing = "common/testing/libtiny_crash.so";

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(SharedLibrary, ARealLibraryPassesBothChecks) {
  EXPECT_EQ(shared_library_refusal(good, {"tiny_entry"}), "");
  EXPECT_EQ(trial_load_refusal(good, {"tiny_entry"}), "");
  EXPECT_TRUE(defines_symbol(good, "tiny_entry"));
  EXPECT_FALSE(defines_symbol(good, "mockcl_configure"));
}

TEST(SharedLibrary, AMissingExportIsNamedByBothChecks) {
  EXPECT_EQ(shared_library_refusal(good, {"tiny_entry", "clGetLayerInfo", "clInitLayer"}),
            "does not export clGetLayerInfo, clInitLayer");
  EXPECT_EQ(trial_load_refusal(good, {"clGetLayerInfo"}), "does not export clGetLayerInfo");
}

// `head -c N libmockcl.so > t.so` made dlopen die of SIGBUS: every cut is refused from the file.
TEST(SharedLibrary, EveryTruncationIsRefusedBeforeLoading) {
  const std::string whole = bytes_of(good);
  ASSERT_GT(whole.size(), 4096u);
  for (std::size_t size :
       {std::size_t{0}, std::size_t{3}, std::size_t{63}, std::size_t{64}, std::size_t{200},
        std::size_t{1000}, std::size_t{5000}, whole.size() / 2, whole.size() - 1}) {
    if (size >= whole.size()) continue;
    const std::string path = write_temp("cut.so", whole.substr(0, size));
    const std::string why = shared_library_refusal(path, {"tiny_entry"});
    EXPECT_FALSE(why.empty()) << size;
    if (size >= 64) {
      EXPECT_TRUE(contains(why, "is truncated or corrupt")) << size << ": " << why;
    }
    if (size < 4) {
      EXPECT_EQ(why, "is not an ELF shared library") << size;
    }
  }
}

TEST(SharedLibrary, ALibraryThatCrashesOnLoadIsRefusedByTheTrial) {
  EXPECT_EQ(shared_library_refusal(crashing, {"tiny_entry"}), "");  // its headers are fine
  const std::string why = trial_load_refusal(crashing, {"tiny_entry"});
  // SIGSEGV; under ASan, which catches it, SIGABRT; under TSan an exit status of its own.
  EXPECT_TRUE(contains(why, "crashes the dynamic loader (")) << why;
  EXPECT_TRUE(contains(why, "in a child process")) << why;
}

TEST(SharedLibrary, HeadersOfAnotherKindAreNamed) {
  const std::string whole = bytes_of(good);
  const auto patched = [&](std::size_t at, const std::string& value) {
    std::string b = whole;
    b.replace(at, value.size(), value);
    return shared_library_refusal(write_temp("patched.so", b), {});
  };
  EXPECT_EQ(patched(EI_CLASS, std::string(1, ELFCLASS32)),
            "is a 32-bit ELF file; this process is 64-bit");
  EXPECT_EQ(patched(EI_DATA, std::string(1, ELFDATA2MSB)),
            "is a big-endian ELF file; this machine is little-endian");
  EXPECT_TRUE(contains(patched(offsetof(Elf64_Ehdr, e_machine), std::string("\xb7\x00", 2)),
                       "is an ELF file for another machine (e_machine 183)"));
  EXPECT_EQ(patched(offsetof(Elf64_Ehdr, e_type), std::string("\x02\x00", 2)),
            "is an executable, not a shared library");
  EXPECT_EQ(patched(offsetof(Elf64_Ehdr, e_type), std::string("\x01\x00", 2)),
            "is an object file (.o), not a shared library");
  // A program header table said to lie far beyond the file.
  EXPECT_TRUE(contains(patched(offsetof(Elf64_Ehdr, e_phoff), std::string("\x00\x00\x00\x40", 4)),
                       "its program header table ends at byte"));
}

TEST(SharedLibrary, FilesThatAreNotLibraries) {
  EXPECT_EQ(shared_library_refusal(write_temp("text.so", "hello\n"), {}),
            "is not an ELF shared library");
  EXPECT_EQ(shared_library_refusal(std::getenv("TEST_TMPDIR"), {}),
            "is a directory, not a shared library");
  EXPECT_EQ(shared_library_refusal("/dev/zero", {}), "is not a regular file");
  EXPECT_EQ(shared_library_refusal("/nonexistent/lib.so", {}),
            "cannot be read: No such file or directory");
  EXPECT_TRUE(contains(trial_load_refusal("/nonexistent/lib.so", {}), "cannot be loaded: "));
}

}  // namespace
}  // namespace clpool::common
