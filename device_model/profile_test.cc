#include "device_model/profile.h"

#include "device_model/device_memory.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace clpool::device_model {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_profile(text, "t.profile");
  } catch (const profile_error& e) {
    return e.what();
  }
  return "";
}

TEST(Profile, BuiltinsAreTheFilesInTheRepository) {
  for (const std::string& name : builtin_profile_names()) {
    std::ifstream in("device_model/profiles/" + name + ".profile");
    ASSERT_TRUE(in) << name;
    std::ostringstream text;
    text << in.rdbuf();
    EXPECT_EQ(load_profile(name), parse_profile(text.str(), name)) << name;
    EXPECT_EQ(load_profile("device_model/profiles/" + name + ".profile"), load_profile(name));
  }
  EXPECT_EQ(builtin_profile_names().size(), 3u);
}

TEST(Profile, NvidiaIsWhatTheH100Measured) {
  const device_profile p = load_profile("nvidia");
  EXPECT_EQ(p.oom_at, refusal_point::first_use);
  EXPECT_EQ(p.oom_status, -4);
  EXPECT_EQ(p.headroom, 2688u * 1024);  // 2.625 MiB
  EXPECT_EQ(p.page, 2u << 20);
  EXPECT_EQ(p.pack_limit, 2u << 20);
  EXPECT_EQ(p.pack_granule, 512u);
  EXPECT_FALSE(p.max_alloc_enforced);
  EXPECT_EQ(p.commands_finish, command_completion::promptly);
  EXPECT_EQ(p.svm_oom_at, refusal_point::creation);
}

// Where an SVM block is refused is its own key: creation unless a profile says first_use, whatever
// oom_at says; format_profile writes it only when it is not creation.
TEST(Profile, SvmOomAt) {
  for (const std::string& name : builtin_profile_names())
    EXPECT_EQ(load_profile(name).svm_oom_at, refusal_point::creation) << name;
  EXPECT_EQ(parse_profile("oom_at = first_use\n", "t").svm_oom_at, refusal_point::creation);
  const device_profile p = parse_profile("oom_at = execution\nsvm_oom_at = first_use\n", "t");
  EXPECT_EQ(p.svm_oom_at, refusal_point::first_use);
  EXPECT_EQ(p.oom_at, refusal_point::execution);
  EXPECT_NE(format_profile(p).find("svm_oom_at = first_use\n"), std::string::npos);
  EXPECT_EQ(parse_profile(format_profile(p), "formatted"), p);
  EXPECT_EQ(format_profile(load_profile("nvidia")).find("svm_oom_at"), std::string::npos);
  device_profile bad;
  bad.svm_oom_at = refusal_point::execution;
  EXPECT_THROW(validate_profile(bad, "t"), profile_error);
}

// When queued commands run decides when a released block is free (FORMAT.md "Two moments of a
// free"): a GPU promptly, POCL's CPU device when the program waits; a missing key is promptly, and
// format_profile writes the key only when it is not.
TEST(Profile, CommandsFinish) {
  EXPECT_EQ(load_profile("pocl").commands_finish, command_completion::at_wait);
  EXPECT_EQ(load_profile("exact").commands_finish, command_completion::promptly);
  EXPECT_EQ(parse_profile("", "t").commands_finish, command_completion::promptly);
  EXPECT_EQ(parse_profile("commands_finish = at_wait\n", "t").commands_finish,
            command_completion::at_wait);
  EXPECT_EQ(format_profile(load_profile("nvidia")).find("commands_finish"), std::string::npos);
  EXPECT_NE(format_profile(load_profile("pocl")).find("commands_finish = at_wait\n"),
            std::string::npos);
}

// Where and how a profile's devices report out-of-memory decides the allocation semantics the
// replay and the mock give them.
TEST(Profile, SemanticsFollowWhereAndHowTheDeviceFails) {
  EXPECT_EQ(semantics_of(load_profile("nvidia")), alloc_semantics::deferred);
  EXPECT_EQ(semantics_of(load_profile("pocl")), alloc_semantics::deferred);
  EXPECT_EQ(semantics_of(load_profile("exact")), alloc_semantics::immediate);
  EXPECT_EQ(semantics_of(parse_profile("oom_at=execution\n", "t")), alloc_semantics::deferred);
  EXPECT_EQ(semantics_of(parse_profile("oom_at=creation\noom_status=-6\n", "t")),
            alloc_semantics::host_oom);
  EXPECT_EQ(semantics_of(parse_profile("oom_at=creation\noom_status=-5\n", "t")),
            alloc_semantics::immediate);
  // Where the device fails comes first: a first-use failure is deferred whatever its status.
  EXPECT_EQ(semantics_of(parse_profile("oom_at=first_use\noom_status=-6\n", "t")),
            alloc_semantics::deferred);
}

TEST(Profile, ExactIsTheDefaultValue) {
  EXPECT_EQ(load_profile("exact"), device_profile{});
  EXPECT_TRUE(load_profile("exact").exact_bytes());
  EXPECT_EQ(parse_profile("", "empty"), device_profile{});
}

TEST(Profile, FormatRoundTrips) {
  for (const std::string& name : builtin_profile_names()) {
    const device_profile p = load_profile(name);
    EXPECT_EQ(parse_profile(format_profile(p), "formatted"), p) << format_profile(p);
  }
}

// profile_fields names every key of the grammar once, and its values spelled out in full (the
// defaults included) read back to the same profile.
TEST(Profile, FieldsAreEveryKeyAndReadBack) {
  for (const std::string& name : builtin_profile_names()) {
    const device_profile p = load_profile(name);
    std::string text;
    std::vector<std::string_view> keys;
    for (const profile_field& f : profile_fields(p)) {
      text += std::string(f.key) + " = " + f.value + "\n";
      keys.push_back(f.key);
    }
    EXPECT_EQ(parse_profile(text, "fields"), p) << text;
    EXPECT_EQ(keys, (std::vector<std::string_view>{
                        "name", "oom_at", "oom_status", "headroom", "page", "pack_limit",
                        "pack_granule", "max_alloc_enforced", "commands_finish", "svm_oom_at"}));
  }
}

// Two profiles of one device differ in no key, whatever their names and whichever keys their
// files spell out; each key that differs is named once, in the grammar's order.
TEST(Profile, DifferingFieldsNameEachKeyButTheName) {
  const device_profile nvidia = load_profile("nvidia");
  device_profile measured = parse_profile(format_profile(nvidia), "measured");
  measured.name = "NVIDIA_H200";
  EXPECT_TRUE(differing_fields(nvidia, measured).empty());
  EXPECT_TRUE(
      differing_fields(nvidia, parse_profile("oom_at = first_use\nheadroom = 2688KiB\n"
                                             "page = 2MiB\npack_limit = 2MiB\npack_granule = 512B\n"
                                             "max_alloc_enforced = no\n"
                                             "oom_status = CL_MEM_OBJECT_ALLOCATION_FAILURE\n",
                                             "spelled"))
          .empty());
  measured.svm_oom_at = refusal_point::first_use;
  measured.headroom += 1;
  EXPECT_EQ(differing_fields(nvidia, measured),
            (std::vector<std::string_view>{"headroom", "svm_oom_at"}));
  EXPECT_EQ(differing_fields(load_profile("pocl"), load_profile("pocl")).size(), 0u);
  EXPECT_EQ(differing_fields(device_profile{}, load_profile("pocl")),
            differing_fields(load_profile("pocl"), device_profile{}));
  EXPECT_EQ(differing_fields(device_profile{}, load_profile("pocl")),
            (std::vector<std::string_view>{"oom_at", "page", "commands_finish"}));
}

TEST(Profile, AcceptsCommentsSpacesAndStatusNames) {
  const device_profile p = parse_profile(
      "# a device\n\n  name=card-1   # trailing comment\noom_status = CL_OUT_OF_HOST_MEMORY\r\n"
      "oom_at=execution\npage = 64 KiB\npack_limit=4k\npack_granule=256\nheadroom=1M\n",
      "t");
  EXPECT_EQ(p.name, "card-1");
  EXPECT_EQ(p.oom_status, -6);
  EXPECT_EQ(p.oom_at, refusal_point::execution);
  EXPECT_EQ(p.page, 64u << 10);
  EXPECT_EQ(p.pack_limit, 4u << 10);
  EXPECT_EQ(p.pack_granule, 256u);
  EXPECT_EQ(p.headroom, 1u << 20);
  EXPECT_EQ(parse_profile("page = 4KiB\r", "t").page, 4096u);  // a last line's CR, nothing after
}

TEST(Profile, EveryBadInputNamesFileLineAndKey) {
  struct bad_case {
    const char* text;
    const char* expected;
  };
  const bad_case cases[] = {
      {"colour = red\n", "t.profile:1: unknown key 'colour'"},
      {"\npage\n", "t.profile:2: expected 'key = value'"},
      {"page = 2 furlongs\n", "t.profile:1: page: '2 furlongs' has an unknown unit"},
      {"page = -2MiB\n", "t.profile:1: page: '-2MiB' is negative"},
      {"headroom = 2.625MiB\n", "headroom: '2.625MiB' is not a whole number of bytes"},
      {"page = 99999999999999999999\n", "is larger than 2^64 - 1 bytes"},
      {"page =\n", "t.profile:1: page: '' is empty"},
      {"page = 0\n", "t.profile:1: page: must be at least 1 byte"},
      {"page = 2GiB\n", "t.profile:1: page: 2147483648 bytes is more than 1 GiB"},
      {"# big\nheadroom = 2TiB\n", "t.profile:2: headroom: more than 1 TiB"},
      {"oom_at = later\n", "oom_at: 'later' is not creation, first_use or execution"},
      {"oom_status = -61\n", "oom_status: '-61' is not an out-of-memory status"},
      {"oom_status = CL_SUCCESS\n", "is not an out-of-memory status"},
      {"max_alloc_enforced = maybe\n", "max_alloc_enforced: 'maybe' is not yes or no"},
      {"svm_oom_at = execution\n", "svm_oom_at: 'execution' is not creation or first_use"},
      {"svm_oom_at = later\n", "svm_oom_at: 'later' is not creation or first_use"},
      {"svm_oom_at = first_use\n",
       "t.profile:1: svm_oom_at: first_use needs oom_at first_use or execution (buffers at "
       "creation; oom_at: not given, the default)"},
      {"oom_at = creation\nsvm_oom_at = first_use\n",
       "t.profile:2: svm_oom_at: first_use needs oom_at first_use or execution (buffers at "
       "creation; oom_at: line 1)"},
      {"commands_finish = soon\n", "commands_finish: 'soon' is not promptly or at_wait"},
      {"name = a b\n", "name: 'a b' is not a name"},
      {"page = 1M\npage = 2M\n", "t.profile:2: page: given twice (first at line 1)"},
      {"page = 1M\npack_limit = 2M\n",
       "t.profile:2: pack_limit: larger than page (shared requests live in one page; page: line "
       "1)"},
      {"pack_limit = 1\n",
       "t.profile:1: pack_limit: needs a page larger than 1 byte (page 1 byte; page: not given, "
       "the default)"},
      {"page = 1B\npack_limit = 1B\n",
       "t.profile:2: pack_limit: needs a page larger than 1 byte (page 1 byte; page: line 1)"},
      {"page = 2M\npack_limit = 1K\npack_granule = 2K\n",
       "t.profile:3: pack_granule: larger than pack_limit (pack_limit: line 2)"},
      {"page = 2M\npack_limit = 1M\npack_granule = 3K\n",
       "t.profile:3: pack_granule: does not divide page (page: line 1)"},
      {"pack_granule = 512\n", "t.profile:1: pack_granule: set without pack_limit"},
      {"pack_granule = 0\n", "t.profile:1: pack_granule: must be at least 1 byte"},
      {"page = 1M\npack_limit = 1M\npack_granule = 8\n",
       "t.profile:3: pack_granule: a page would hold more than 65536 of them (page: line 1)"},
      // What an editor or another system adds, named: a mark that is invisible, line ends that
      // make the whole file one line, and any byte that would not show in a key or a value.
      {"\xEF\xBB\xBFpage = 4KiB\n", "t.profile:1: starts with a UTF-8 byte-order mark"},
      {"name = x\rpage = 4KiB\r", "t.profile:1: lines end in a bare CR (classic Mac line ends)"},
      {"pa\x01ge = 4KiB\n", "t.profile:1: unknown key 'pa\\x01ge'"},
      {"page = 4\x1b[31mKiB\n", "t.profile:1: page: '4\\x1B[31mKiB'"},
  };
  for (const bad_case& c : cases) {
    const std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.text << " gave: " << e;
    // Every error names the line: "t.profile:N: ...".
    EXPECT_EQ(e.rfind("t.profile:", 0), 0u) << e;
    EXPECT_TRUE(e.size() > 10 && std::isdigit(static_cast<unsigned char>(e[10]))) << e;
  }
}

// A file named like a built-in profile read as that profile in every report ("nvidia profile")
// whatever its values: only a copy of the built-in itself (the shipped file, read by its path)
// may take the name.
TEST(Profile, AFileMayNotTakeABuiltinsName) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/named.profile";
  std::ofstream(path) << "# mine\nname = nvidia\npage = 1B\n";
  try {
    load_profile(path);
    ADD_FAILURE() << "a file named nvidia with other values was read";
  } catch (const profile_error& e) {
    EXPECT_NE(
        std::string(e.what()).find(path + ":2: name: 'nvidia' is a built-in profile's name (exact, "
                                          "nvidia, pocl), and this file's values are not that "
                                          "profile's (oom_at, headroom, page, pack_limit, "
                                          "pack_granule, max_alloc_enforced differ)"),
        std::string::npos)
        << e.what();
  }
  std::ofstream(path) << format_profile(load_profile("nvidia"));
  EXPECT_EQ(load_profile(path), load_profile("nvidia"));
  std::ofstream(path) << "name = exact\n";  // every other key at exact's value
  EXPECT_EQ(load_profile(path), load_profile("exact"));
}

TEST(Profile, LoadNamesWhatIsWrong) {
  const auto error_loading = [](const std::string& what) {
    try {
      load_profile(what);
    } catch (const profile_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_loading("amd").find("no such built-in profile (exact, nvidia, pocl)"),
            std::string::npos);
  EXPECT_NE(
      error_loading("/no/such.profile").find("/no/such.profile: cannot be opened: No such file"),
      std::string::npos);
  EXPECT_NE(
      error_loading("device_model/").find("device_model/: cannot be read: not a regular file"),
      std::string::npos);

  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/bad.profile";
  std::ofstream(path) << "page = 2MiB\nfoo = 1\n";
  EXPECT_NE(error_loading(path).find(path + ":2: unknown key 'foo'"), std::string::npos);
  std::ofstream(path, std::ios::binary) << std::string("page = 1\0x", 10);
  EXPECT_NE(error_loading(path).find("not text (a NUL byte at byte 8)"), std::string::npos);
}

// A file without `name =` was reported as the "exact profile" although its page changed the
// answer: it is called by its path.
TEST(Profile, AFileWithoutANameIsCalledByItsPath) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/unnamed.profile";
  std::ofstream(path) << "page = 4KiB\n";
  const device_profile p = load_profile(path);
  EXPECT_EQ(p.name, path);
  EXPECT_EQ(p.page, 4096u);
  std::ofstream(path) << "name = mine\npage = 4KiB\n";
  EXPECT_EQ(load_profile(path).name, "mine");
  EXPECT_EQ(parse_profile("page = 4KiB\n", "text").name, "exact");  // text alone has no path
  // A device built on it (it refused the path as a name, so clpool_replay refused the profile).
  EXPECT_NO_THROW(device_memory(p, std::uint64_t{1} << 30));
}

}  // namespace
}  // namespace clpool::device_model
