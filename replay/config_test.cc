#include "replay/config.h"

#include <gtest/gtest.h>

namespace clpool::replay {
namespace {

TEST(ParseBytes, UnitsAndPlainBytes) {
  EXPECT_EQ(parse_bytes("0"), 0u);
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("4096B"), 4096u);
  EXPECT_EQ(parse_bytes("1KiB"), 1024u);
  EXPECT_EQ(parse_bytes("512MiB"), 512ull << 20);
  EXPECT_EQ(parse_bytes("4GiB"), 4ull << 30);
  EXPECT_EQ(parse_bytes("4gib"), 4ull << 30);
  EXPECT_EQ(parse_bytes("4G"), 4ull << 30);
  EXPECT_EQ(parse_bytes("2TiB"), 2ull << 40);
  EXPECT_EQ(parse_bytes("18446744073709551615"), ~0ull);
}

void expect_bad(const char* text, const char* fragment) {
  try {
    parse_bytes(text, "--capacity");
    ADD_FAILURE() << "accepted " << text;
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--capacity"), std::string::npos) << e.what();
  }
}

TEST(ParseBytes, RejectsGarbage) {
  expect_bad("", "empty");
  expect_bad("-1", "negative");
  expect_bad("-4GiB", "negative");
  expect_bad("abc", "not a number");
  expect_bad("1.5GiB", "whole number");
  expect_bad("4GB", "is ambiguous: decimal units are not accepted; write 4GiB");
  expect_bad("4 potatoes", "unknown unit");
  expect_bad("18446744073709551616", "larger than");
  expect_bad("17179869184GiB", "larger than");
}

// The grammar is tabled in common/byte_size_test.cc; here: clpool_replay uses it.
TEST(ParseBytes, OneSpellingOfEachClass) {
  EXPECT_EQ(parse_bytes("128MiB"), 128ull << 20);
  EXPECT_EQ(parse_bytes("128mib"), 128ull << 20);
  EXPECT_EQ(parse_bytes("128m"), 128ull << 20);
  EXPECT_EQ(parse_bytes("4096B"), 4096u);
  try {
    parse_bytes("128MB", "--capacity");
    ADD_FAILURE() << "accepted 128MB";
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(),
                 "--capacity: '128MB' is ambiguous: decimal units are not accepted; write 128MiB");
  }
}

TEST(ParseDeviceBytes, AtMostTwoToThe62) {
  EXPECT_EQ(parse_device_bytes("4611686018427387904"), std::uint64_t{1} << 62);
  try {
    parse_device_bytes("18446744073709551615", "--capacity");
    ADD_FAILURE() << "accepted 2^64 - 1";
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "--capacity: '18446744073709551615' is larger than the largest device, "
                           "2^62 bytes (4 EiB)");
  }
}

TEST(FormatBytes, Readable) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(4ull << 30), "4 GiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
}

TEST(FormatBytesExact, NeverRounds) {
  EXPECT_EQ(format_bytes_exact(1048ull << 20), "1048 MiB");
  EXPECT_EQ(format_bytes_exact(4ull << 30), "4 GiB");
  EXPECT_EQ(format_bytes_exact(1025), "1025 B");
  EXPECT_EQ(format_bytes_exact(0), "0 B");
}

TEST(ParseConfig, PoolAndNoPool) {
  EXPECT_FALSE(parse_config("nopool").use_pool);
  const replay_config d = parse_config("pool");
  EXPECT_TRUE(d.use_pool);
  EXPECT_EQ(d.leading_bits, default_leading_bits);
  const replay_config c = parse_config("pool:lb=2,limit=1GiB,trim-max-held=64MiB,trim-ratio=0.5");
  EXPECT_EQ(c.leading_bits, 2u);
  EXPECT_EQ(c.limit, 1ull << 30);
  EXPECT_EQ(c.trim.max_held_bytes, 64ull << 20);
  EXPECT_EQ(c.trim.max_held_to_active_ratio, 0.5);
  EXPECT_EQ(to_string(c), "pool:lb=2,limit=1GiB,trim-max-held=64MiB,trim-ratio=0.5");
  EXPECT_EQ(to_string(parse_config(to_string(c))), to_string(c));
  EXPECT_EQ(to_string(parse_config("nopool")), "nopool");
}

TEST(ParseConfig, RejectsBadConfigs) {
  for (const char* bad : {"", "pool:", "pool:lb=13", "pool:lb=-1", "pool:lb=x", "pool:lb=4,lb=2",
                          "pool:size=3", "pool:lb", "nopool:lb=2", "heap", "pool:trim-ratio=nan",
                          "pool:trim-ratio=-1", "pool:limit=0", "pool:limit=lots", "pool:lb=4,"}) {
    EXPECT_THROW(parse_config(bad), config_error) << bad;
  }
  try {
    parse_config("pool:lb=4,lb=2");
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("given twice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clpool::replay
