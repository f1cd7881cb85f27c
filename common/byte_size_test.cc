// THE table of size spellings: every tool (clpool_replay, the layer, mockcl, profiles, the probe)
// parses sizes with parse_byte_size, so this is the one place that says what is accepted.
#include "common/byte_size.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace clpool::common {
namespace {

struct accepted {
  const char* text;
  std::uint64_t bytes;
};

TEST(ByteSize, AcceptedSpellings) {
  const accepted table[] = {
      // plain bytes, with or without B
      {"0", 0},
      {"7", 7},
      {"4096", 4096},
      {"4096B", 4096},
      {"4096b", 4096},
      {"18446744073709551615", ~std::uint64_t{0}},
      // binary units, any case
      {"3KiB", 3ull << 10},
      {"2688kib", 2688ull << 10},
      {"512MiB", 512ull << 20},
      {"128mib", 128ull << 20},
      {"128MIB", 128ull << 20},
      {"2GiB", 2ull << 30},
      {"2TiB", 2ull << 40},
      {"16777215TiB", 16777215ull << 40},
      // the short forms k, m, g, t mean the same binary units
      {"4k", 4ull << 10},
      {"256m", 256ull << 20},
      {"256M", 256ull << 20},
      {"8g", 8ull << 30},
      {"2T", 2ull << 40},
      // every unit format_bytes prints, up to EiB, reads back
      {"1PiB", 1ull << 50},
      {"3p", 3ull << 50},
      {"15EiB", 15ull << 60},
      {"4e", 4ull << 60},
      // spaces around the value and before the unit
      {" 4 gib ", 4ull << 30},
      {"\t4\tGiB", 4ull << 30},
      {"512 MiB", 512ull << 20},
  };
  for (const accepted& a : table) {
    std::string why;
    const std::optional<std::uint64_t> v = parse_byte_size(a.text, why);
    ASSERT_TRUE(v) << "'" << a.text << "' refused: " << why;
    EXPECT_EQ(*v, a.bytes) << a.text;
  }
}

struct refused {
  const char* text;
  const char* why;
};

TEST(ByteSize, RefusedSpellings) {
  const refused table[] = {
      {"", "is empty"},
      {"   ", "is empty"},
      {"-1", "is negative"},
      {"-2GiB", "is negative"},
      {"x", "is not a number"},
      {"GiB", "is not a number"},
      {"+1", "is not a number"},
      {"1.5GiB", "is not a whole number of bytes"},
      {"2,5m", "is not a whole number of bytes"},
      {"2KB", "is ambiguous: decimal units are not accepted; write 2KiB"},
      {"128MB", "is ambiguous: decimal units are not accepted; write 128MiB"},
      {"2GB", "is ambiguous: decimal units are not accepted; write 2GiB"},
      {"2gb", "is ambiguous: decimal units are not accepted; write 2GiB"},
      {"1TB", "is ambiguous: decimal units are not accepted; write 1TiB"},
      {"2GiBs",
       "has an unknown unit 'GiBs' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, e)"},
      {"12x",
       "has an unknown unit 'x' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, e)"},
      {"1ZiB",
       "has an unknown unit 'ZiB' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, e)"},
      {"0x10",
       "has an unknown unit 'x10' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, e)"},
      {"1e3",
       "has an unknown unit 'e3' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, e)"},
      {"2 G i B",
       "has an unknown unit 'G i B' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, e)"},
      {"1\nGiB",
       "has an unknown unit '\\x0aGiB' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, "
       "e)"},
      {"18446744073709551616", "is larger than 2^64 - 1 bytes"},
      {"16777216TiB", "is larger than 2^64 - 1 bytes"},
      {"16EiB", "is larger than 2^64 - 1 bytes"},
      {"2PB", "is ambiguous: decimal units are not accepted; write 2PiB"},
      {"17179869184g", "is larger than 2^64 - 1 bytes"},
  };
  for (const refused& r : table) {
    std::string why;
    EXPECT_FALSE(parse_byte_size(r.text, why)) << r.text;
    EXPECT_EQ(why, r.why) << "'" << r.text << "'";
  }
}

TEST(DeviceSize, LargestDeviceIsTwoToThe62) {
  std::string why;
  size_rules device;
  device.device = true;
  EXPECT_EQ(parse_size("4194304TiB", device, why), max_device_bytes);
  EXPECT_EQ(parse_size("4611686018427387904", device, why), std::uint64_t{1} << 62);
  EXPECT_FALSE(parse_size("4611686018427387905", device, why));
  EXPECT_EQ(why, "is larger than the largest device, 2^62 bytes (4 EiB)");
  why.clear();
  EXPECT_FALSE(parse_size("18446744073709551615", device, why));
  EXPECT_EQ(why, "is larger than the largest device, 2^62 bytes (4 EiB)");
  EXPECT_FALSE(parse_size("2GB", device, why));
  EXPECT_EQ(why, "is ambiguous: decimal units are not accepted; write 2GiB");
}

// The one formatter (clpool_probe's, clpool_replay's and mockcl's spellings).
TEST(FormatBytesExact, TheLargestExactUnitInEachSpelling) {
  EXPECT_EQ(format_bytes_exact(0), "0 B");
  EXPECT_EQ(format_bytes_exact(4097), "4097 B");
  EXPECT_EQ(format_bytes_exact(2688 * 1024), "2688 KiB");
  EXPECT_EQ(format_bytes_exact(std::uint64_t{3} << 40), "3 TiB");
  EXPECT_EQ(format_bytes_exact(std::uint64_t{1} << 50), "1024 TiB");
  EXPECT_EQ(format_bytes_exact(std::uint64_t{4} << 30, byte_units::joined), "4GiB");
  EXPECT_EQ(format_bytes_exact(4097, byte_units::joined), "4097");
  EXPECT_EQ(format_bytes_exact(std::uint64_t{256} << 20, byte_units::letter), "256m");
  EXPECT_EQ(format_bytes_exact(std::uint64_t{3} << 40, byte_units::letter), "3t");
  EXPECT_EQ(format_bytes_exact(0, byte_units::letter), "0");
}

TEST(FormatBytesExact, EverySpellingParsesBack) {
  for (const std::uint64_t v :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4097}, std::uint64_t{1} << 10,
        std::uint64_t{3} << 20, std::uint64_t{5} << 30, std::uint64_t{7} << 40,
        (std::uint64_t{1} << 62) - 1, std::uint64_t{1} << 62}) {
    for (const byte_units u : {byte_units::spaced, byte_units::joined, byte_units::letter}) {
      std::string why;
      const std::optional<std::uint64_t> back = parse_byte_size(format_bytes_exact(v, u), why);
      ASSERT_TRUE(back.has_value()) << format_bytes_exact(v, u) << ": " << why;
      EXPECT_EQ(*back, v) << format_bytes_exact(v, u);
    }
  }
}

TEST(FormatBytes, RoundedForPeople) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(123), "123 B");
  EXPECT_EQ(format_bytes(std::uint64_t{4} << 30), "4 GiB");
  EXPECT_EQ(format_bytes(std::uint64_t{3} << 19), "1.50 MiB");
  EXPECT_EQ(format_bytes(~std::uint64_t{0}), "16.00 EiB");
}

// What a report prints for people, rounded, parses back when it is exact: a user may type what a
// tool printed (2^50 prints as "1 PiB").
TEST(FormatBytes, ExactFiguresParseBack) {
  for (const std::uint64_t v : {std::uint64_t{1} << 50, std::uint64_t{3} << 50,
                                std::uint64_t{1} << 60, std::uint64_t{1} << 62}) {
    std::string why;
    EXPECT_EQ(parse_byte_size(format_bytes(v), why), v) << format_bytes(v) << ": " << why;
  }
  std::string why;
  EXPECT_EQ(parse_size("4EiB", size_rules{.device = true}, why), max_device_bytes);
  EXPECT_FALSE(parse_size("5EiB", size_rules{.device = true}, why));
}

TEST(FormatBytes, BothForReports) {
  EXPECT_EQ(format_bytes_both(0), "0 bytes");
  EXPECT_EQ(format_bytes_both(1), "1 byte");
  EXPECT_EQ(format_bytes_both(1023), "1023 bytes");
  EXPECT_EQ(format_bytes_both(1024), "1 KiB (1024 bytes)");
  EXPECT_EQ(format_bytes_both(std::uint64_t{3} << 19), "1.50 MiB (1572864 bytes)");
}

}  // namespace
}  // namespace clpool::common
