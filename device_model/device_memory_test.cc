#include "device_model/device_memory.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace clpool::device_model {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

device_profile nvidia() { return load_profile("nvidia"); }

// Commits n requests of `bytes` on an unbounded device; returns what they committed.
std::uint64_t committed_by(const device_profile& p, std::uint64_t bytes, int n) {
  device_memory d(p, 1024 * GiB);
  placement pl;
  for (int i = 0; i < n; ++i) EXPECT_TRUE(d.try_commit(bytes, pl));
  EXPECT_TRUE(d.state_is_valid());
  return d.committed();
}

// The H100 measurements of docs/device-facts.md, one line each.
TEST(DeviceMemoryNvidia, MatchesTheH100Granularity) {
  const device_profile p = nvidia();
  EXPECT_EQ(committed_by(p, 2 * MiB + 1, 1), 4 * MiB);
  EXPECT_EQ(committed_by(p, 17825791, 1), 18 * MiB);
  EXPECT_EQ(committed_by(p, 1, 16384), 8 * MiB);          // 512 B each, 4096 per page
  EXPECT_EQ(committed_by(p, 4 * KiB, 16384), 64 * MiB);   // exactly
  EXPECT_EQ(committed_by(p, 1 * MiB, 256), 256 * MiB);    // two per page
  EXPECT_EQ(committed_by(p, 512 * KiB + 1, 3), 2 * MiB);  // three per page
  EXPECT_EQ(committed_by(p, 512 * KiB + 1, 4), 4 * MiB);
  EXPECT_EQ(committed_by(p, 1114111, 1), 2 * MiB);  // PyOpenCL's 1 MiB bin: a page
  EXPECT_EQ(committed_by(p, 1114111, 2), 4 * MiB);
  EXPECT_EQ(committed_by(p, 2 * MiB, 3), 6 * MiB);
}

TEST(DeviceMemoryNvidia, SmallRequestsUseTheLeftoverOfASharedPage) {
  device_memory d(nvidia(), 1 * GiB);
  placement big, small;
  ASSERT_TRUE(d.try_commit(1114111, big));
  ASSERT_TRUE(d.try_commit(64 * KiB, small));
  EXPECT_EQ(d.committed(), 2 * MiB);
  // The tail of a request over 2 MiB is not shared.
  placement large;
  ASSERT_TRUE(d.try_commit(3 * MiB, large));
  ASSERT_TRUE(d.try_commit(800 * KiB, small));  // fits beside the 1,114,111 B block
  EXPECT_EQ(d.committed(), 6 * MiB);
  ASSERT_TRUE(d.try_commit(800 * KiB, small));  // no room left there: a new page
  EXPECT_EQ(d.committed(), 8 * MiB);
  EXPECT_TRUE(d.state_is_valid());
}

TEST(DeviceMemoryNvidia, HeadroomIsNeverHandedOut) {
  // 64 MiB free at start: 2.625 MiB stays free, so 30 pages of 2 MiB fit and the 31st does not.
  device_memory d(nvidia(), 64 * MiB);
  EXPECT_EQ(d.usable(), 64 * MiB - 2688 * KiB);
  placement pl;
  int n = 0;
  while (d.try_commit(2 * MiB, pl)) ++n;
  EXPECT_EQ(n, 30);
  EXPECT_EQ(d.capacity() - d.committed(), 4 * MiB);
  // A 512 B request needs a page of its own now, and no page fits.
  EXPECT_FALSE(d.try_commit(1, pl));
}

TEST(DeviceMemoryNvidia, ReleaseGivesPagesBackAtOnce) {
  device_memory d(nvidia(), 1 * GiB);
  std::vector<placement> pls(5);
  for (auto& pl : pls) ASSERT_TRUE(d.try_commit(700 * KiB, pl));  // 2 per page: 3 pages
  EXPECT_EQ(d.committed(), 6 * MiB);
  EXPECT_EQ(d.requested(), 5 * 700 * KiB);
  for (auto& pl : pls) d.release(pl, 700 * KiB);
  EXPECT_EQ(d.committed(), 0u);
  EXPECT_EQ(d.requested(), 0u);
  EXPECT_EQ(d.shared_pages_open(), 0u);
  EXPECT_EQ(d.peak_committed(), 6 * MiB);
  EXPECT_TRUE(d.state_is_valid());
}

// Freed space inside a shared page is a hole: a request larger than the hole does not use it
// even when the page has that much free in all (the H200's boundary trials,
// tools/replay/testdata/boundary).
TEST(DeviceMemoryNvidia, AFreedHoleTakesOnlyWhatFitsInIt) {
  device_memory d(nvidia(), 1 * GiB);
  placement a, b, c, e;
  ASSERT_TRUE(d.try_commit(512 * KiB, a));  // [a:512K][b:512K][c:512K][free 512K]
  ASSERT_TRUE(d.try_commit(512 * KiB, b));
  ASSERT_TRUE(d.try_commit(512 * KiB, c));
  EXPECT_EQ(d.shared_pages_open(), 1u);
  d.release(b, 512 * KiB);  // 1 MiB free in the page, as two runs of 512 KiB
  ASSERT_TRUE(d.try_commit(768 * KiB, e));
  EXPECT_EQ(d.shared_pages_open(), 2u);  // a new page: no run of 768 KiB
  EXPECT_EQ(d.committed(), 4 * MiB);
  placement f;
  // Two runs of 512 KiB hold it: the page's tail, that size since c came, and b's hole, newer.
  ASSERT_TRUE(d.try_commit(512 * KiB, f));
  EXPECT_EQ(f.page, a.page);
  EXPECT_EQ(f.offset, c.offset + 1024);  // in granules of 512 B
  d.release(f, 512 * KiB);
  d.release(c, 512 * KiB);  // b's hole, c's and f's join: 1.5 MiB in one run
  placement g;
  ASSERT_TRUE(d.try_commit(1536 * KiB, g));
  EXPECT_EQ(g.page, a.page);
  EXPECT_EQ(d.shared_pages_open(), 2u);
  EXPECT_TRUE(d.state_is_valid());
}

TEST(DeviceMemoryExact, IsTheSumOfTheRequests) {
  device_memory d(device_profile{}, 100);
  placement a, b, c;
  EXPECT_TRUE(d.try_commit(60, a));
  EXPECT_TRUE(d.try_commit(40, b));
  EXPECT_FALSE(d.try_commit(1, c));
  d.release(a, 60);
  EXPECT_TRUE(d.try_commit(60, c));
  EXPECT_EQ(d.committed(), 100u);
  EXPECT_FALSE(d.try_commit(~std::uint64_t{0}, a));  // no overflow
  EXPECT_TRUE(d.state_is_valid());
}

TEST(DeviceMemory, HeadroomLargerThanTheCapacityLeavesNothingUsable) {
  device_memory d(nvidia(), 1 * MiB);
  placement pl;
  EXPECT_EQ(d.usable(), 0u);
  EXPECT_FALSE(d.try_commit(1, pl));
  EXPECT_EQ(d.committed(), 0u);
}

TEST(DeviceMemory, RoundedIsWhatALoneRequestCommitsWithoutSharing) {
  device_memory d(nvidia(), 1 * GiB);
  EXPECT_EQ(d.rounded(1), 512u);
  EXPECT_EQ(d.rounded(2 * MiB), 2 * MiB);
  EXPECT_EQ(d.rounded(2 * MiB + 1), 4 * MiB);
  EXPECT_EQ(d.rounded(~std::uint64_t{0}), ~std::uint64_t{0});  // saturates
}

// The rules of device_memory.h written as plainly as possible: numbered pages, each with its free
// bytes, searched one by one. The ledger must commit exactly what this computes.
class reference_model {
 public:
  reference_model(const device_profile& p, std::uint64_t capacity)
      : p_(p), usable_(capacity > p.headroom ? capacity - p.headroom : 0) {}

  std::optional<int> commit(std::uint64_t bytes) {
    const int id = next_id_++;
    if (p_.page == 1 || bytes > p_.pack_limit) {
      const std::uint64_t need = (bytes + p_.page - 1) / p_.page * p_.page;
      if (committed() + need > usable_) return std::nullopt;
      whole_[id] = need;
      return id;
    }
    const std::uint64_t granules = (bytes + p_.pack_granule - 1) / p_.pack_granule;
    const std::uint64_t per_page = p_.page / p_.pack_granule;
    // The smallest free run of granules that holds it, over every page; of equal runs, the one
    // that has been that size longest.
    auto best = runs_.end();
    for (auto it = runs_.begin(); it != runs_.end(); ++it) {
      const auto& [len, since] = it->second;
      if (len >= granules && (best == runs_.end() || len < best->second.first ||
                              (len == best->second.first && since < best->second.second)))
        best = it;
    }
    int pid;
    std::uint64_t start;
    if (best != runs_.end()) {
      pid = best->first.first;
      start = best->first.second;
      const std::uint64_t len = best->second.first;
      runs_.erase(best);
      if (len > granules) runs_[{pid, start + granules}] = {len - granules, ++clock_};
    } else {
      if (committed() + p_.page > usable_) return std::nullopt;
      // Page numbers as the ledger hands them out: the last closed one first, else a new one.
      pid = next_page_++;
      if (!closed_.empty()) {
        pid = closed_.back();
        closed_.pop_back();
        --next_page_;
      }
      pages_.insert(pid);
      start = 0;
      if (granules < per_page) runs_[{pid, granules}] = {per_page - granules, ++clock_};
    }
    shared_[id] = {pid, {start, granules}};
    return id;
  }

  void release(int id) {
    if (whole_.erase(id)) return;
    const auto [pid, place] = shared_.at(id);
    shared_.erase(id);
    auto [start, len] = place;
    // Joined with the free runs that touch it, into a new run.
    const auto after = runs_.find({pid, start + len});
    if (after != runs_.end()) {
      len += after->second.first;
      runs_.erase(after);
    }
    for (auto it = runs_.begin(); it != runs_.end(); ++it) {
      if (it->first.first == pid && it->first.second + it->second.first == start) {
        start = it->first.second;
        len += it->second.first;
        runs_.erase(it);
        break;
      }
    }
    if (len == p_.page / p_.pack_granule) {
      pages_.erase(pid);
      closed_.push_back(pid);
      return;
    }
    runs_[{pid, start}] = {len, ++clock_};
  }

  std::uint64_t committed() const {
    std::uint64_t c = pages_.size() * p_.page;
    for (const auto& [id, bytes] : whole_) c += bytes;
    return c;
  }

 private:
  device_profile p_;
  std::uint64_t usable_;
  int next_id_ = 0, next_page_ = 0;
  std::vector<int> closed_;
  std::map<int, std::uint64_t> whole_;
  std::map<int, std::pair<int, std::pair<std::uint64_t, std::uint64_t>>> shared_;  // page, place
  std::set<int> pages_;                                                            // open shared
  // Free runs: (page, start) -> (granules, when it came to be that size).
  std::map<std::pair<int, std::uint64_t>, std::pair<std::uint64_t, std::uint64_t>> runs_;
  std::uint64_t clock_ = 0;
};

// A random valid profile: small pages so that sequences reach every case.
rc::Gen<device_profile> gen_profile() {
  return rc::gen::exec([] {
    device_profile p;
    p.page = std::uint64_t{1} << *rc::gen::inRange(0, 13);
    if (p.page > 1 && *rc::gen::arbitrary<bool>()) {
      p.pack_granule = std::uint64_t{1} << *rc::gen::inRange(0, 1 + __builtin_ctzll(p.page));
      p.pack_limit = *rc::gen::inRange<std::uint64_t>(p.pack_granule, p.page + 1);
    }
    p.headroom = *rc::gen::inRange<std::uint64_t>(0, 3 * p.page);
    return p;
  });
}

RC_GTEST_PROP(DeviceMemory, CommitsWhatThePageModelComputes, ()) {
  const device_profile p = *gen_profile();
  const std::uint64_t capacity = *rc::gen::inRange<std::uint64_t>(0, 64 * p.page + 4096);
  device_memory d(p, capacity);
  reference_model ref(p, capacity);
  struct live {
    int ref_id;
    placement pl;
    std::uint64_t bytes;
  };
  std::vector<live> lives;
  std::uint64_t requested = 0;
  const int steps = *rc::gen::inRange(1, 300);
  for (int s = 0; s < steps; ++s) {
    if (lives.empty() || *rc::gen::inRange(0, 3) != 0) {
      const std::uint64_t bytes = *rc::gen::inRange<std::uint64_t>(1, 3 * p.page + 2);
      placement pl;
      const bool predicted = d.fits(bytes);
      const bool ok = d.try_commit(bytes, pl);
      RC_ASSERT(predicted == ok);
      const std::optional<int> id = ref.commit(bytes);
      RC_ASSERT(ok == id.has_value());
      if (ok) {
        lives.push_back({*id, pl, bytes});
        requested += bytes;
      }
    } else {
      const std::size_t i = *rc::gen::inRange<std::size_t>(0, lives.size());
      d.release(lives[i].pl, lives[i].bytes);
      ref.release(lives[i].ref_id);
      requested -= lives[i].bytes;
      lives.erase(lives.begin() + static_cast<long>(i));
    }
    RC_ASSERT(d.committed() == ref.committed());
    RC_ASSERT(d.requested() == requested);
    RC_ASSERT(d.committed() <= d.usable());
    RC_ASSERT(d.state_is_valid());
  }
  for (const live& l : lives) d.release(l.pl, l.bytes);
  RC_ASSERT(d.committed() == 0u);
  RC_ASSERT(d.state_is_valid());
}

}  // namespace
}  // namespace clpool::device_model
