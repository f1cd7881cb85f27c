#include "replay/config.h"

#include <gtest/gtest.h>

namespace clpool::replay {
namespace {

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
  // alloc=: where the pool's allocator commits a buffer; device (the default) is not written.
  EXPECT_FALSE(d.immediate_allocator);
  EXPECT_FALSE(parse_config("pool:alloc=device").immediate_allocator);
  const replay_config i = parse_config("pool:alloc=immediate,lb=2");
  EXPECT_TRUE(i.immediate_allocator);
  EXPECT_EQ(to_string(i), "pool:lb=2,alloc=immediate");
  EXPECT_EQ(to_string(parse_config(to_string(i))), to_string(i));
  EXPECT_EQ(to_string(parse_config("pool:alloc=device")), "pool:lb=4");
}

TEST(ParseConfig, RejectsBadConfigs) {
  for (const char* bad : {"",
                          "pool:",
                          "pool:lb=13",
                          "pool:lb=-1",
                          "pool:lb=x",
                          "pool:lb=4,lb=2",
                          "pool:size=3",
                          "pool:lb",
                          "nopool:lb=2",
                          "heap",
                          "pool:trim-ratio=nan",
                          "pool:trim-ratio=-1",
                          "pool:limit=0",
                          "pool:limit=lots",
                          "pool:lb=4,",
                          "pool:alloc=",
                          "pool:alloc=deferred",
                          "pool:alloc=Immediate",
                          "pool:alloc=immediate,alloc=device",
                          "nopool:alloc=immediate"}) {
    EXPECT_THROW(parse_config(bad), config_error) << bad;
  }
  try {
    parse_config("pool:lb=4,lb=2");
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("given twice"), std::string::npos) << e.what();
  }
  try {
    parse_config("pool:alloc=deferred");
    ADD_FAILURE() << "alloc=deferred accepted";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("alloc 'deferred' must be device or immediate"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace clpool::replay
