#include "trace/id_map.h"

#include <cstdint>
#include <map>
#include <random>

#include <gtest/gtest.h>

namespace clpool::trace {
namespace {

TEST(FlatIdMap, InsertFindErase) {
  flat_id_map<int> m;
  EXPECT_NE(m.insert(5, 50), nullptr);
  EXPECT_EQ(m.insert(5, 51), nullptr) << "a duplicate key changes nothing";
  ASSERT_NE(m.find(5), nullptr);
  EXPECT_EQ(*m.find(5), 50);
  int out = 0;
  EXPECT_TRUE(m.erase(5, &out));
  EXPECT_EQ(out, 50);
  EXPECT_FALSE(m.erase(5));
  EXPECT_EQ(m.find(5), nullptr);
  EXPECT_TRUE(m.empty());
}

TEST(FlatIdMap, EveryU64IsAKey) {
  flat_id_map<int> m;
  EXPECT_NE(m.insert(0, 1), nullptr);
  EXPECT_NE(m.insert(~std::uint64_t{0}, 2), nullptr);
  EXPECT_EQ(*m.find(0), 1);
  EXPECT_EQ(*m.find(~std::uint64_t{0}), 2);
}

// Random inserts and erases against std::map, with keys that collide a lot (aligned pointers and
// a small range), to exercise growth and backward-shift deletion.
TEST(FlatIdMap, MatchesStdMapUnderChurn) {
  std::mt19937_64 rng(42);
  flat_id_map<std::uint64_t> m;
  std::map<std::uint64_t, std::uint64_t> ref;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t key = (rng() % 3000) << (i % 2 ? 12 : 0);
    if (rng() % 2) {
      const bool inserted = m.insert(key, i) != nullptr;
      EXPECT_EQ(inserted, ref.emplace(key, i).second);
    } else {
      std::uint64_t got = 0;
      const bool erased = m.erase(key, &got);
      auto it = ref.find(key);
      ASSERT_EQ(erased, it != ref.end());
      if (erased) {
        EXPECT_EQ(got, it->second);
        ref.erase(it);
      }
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  for (const auto& [k, v] : ref) {
    ASSERT_NE(m.find(k), nullptr);
    EXPECT_EQ(*m.find(k), v);
  }
  std::size_t seen = 0;
  m.for_each([&](std::uint64_t, std::uint64_t&) { ++seen; });
  EXPECT_EQ(seen, ref.size());
}

}  // namespace
}  // namespace clpool::trace
