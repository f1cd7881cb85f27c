// Model-based test of memory_pool: random sequences of allocate, release, free_held, stop_holding,
// set_limit, trim and set_trim_policy run against a simple model on a capacity-limited fake device.
//
// The model is deliberately naive: held blocks are a sorted map of block size -> count, and every
// rule (hit if the bin has a block; otherwise try; on failure free largest-first worth the
// shortfall, then everything; trim largest-first to the budget) is a few lines. After every step
// the pool's counters, its held bins and the device's outstanding bytes must match the model
// exactly, and nothing may leak when the pool and its allocations are gone.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"
#include "tests/generators.h"

namespace clpool {
namespace {

using testing::fake_allocator;
using testing::fake_device;
using pool_t = memory_pool<fake_allocator>;

struct live_block {
  std::uint64_t size;
  std::uint64_t rounded;
};

struct model {
  std::uint64_t capacity = 0;
  unsigned leading_bits = default_leading_bits;
  std::uint64_t limit = unlimited;
  bool holding = true;
  trim_policy trim;
  std::map<std::uint64_t, std::uint64_t> held;  // rounded block size -> blocks
  std::vector<live_block> live;                 // in the order the sut keeps them

  std::uint64_t held_bytes() const {
    std::uint64_t total = 0;
    for (const auto& [bytes, n] : held) total += bytes * n;
    return total;
  }
  std::uint64_t held_blocks() const {
    std::uint64_t total = 0;
    for (const auto& [bytes, n] : held) total += n;
    return total;
  }
  std::uint64_t active_bytes() const {
    std::uint64_t total = 0;
    for (const auto& b : live) total += b.size;
    return total;
  }
  std::uint64_t active_rounded() const {
    std::uint64_t total = 0;
    for (const auto& b : live) total += b.rounded;
    return total;
  }
  std::uint64_t managed() const { return active_rounded() + held_bytes(); }

  // Frees held blocks, largest first, until at least `target` bytes are freed. Returns the bytes.
  std::uint64_t free_largest(std::uint64_t target) {
    std::uint64_t freed = 0;
    while (freed < target && !held.empty()) {
      auto largest = std::prev(held.end());
      freed += largest->first;
      if (--largest->second == 0) held.erase(largest);
    }
    return freed;
  }

  std::uint64_t budget() const {
    std::uint64_t b = trim.max_held_bytes;
    if (trim.max_held_to_active_ratio >= 0.0) {
      const long double r =
          static_cast<long double>(trim.max_held_to_active_ratio) * active_bytes();
      if (r < static_cast<long double>(b)) b = static_cast<std::uint64_t>(r);
    }
    return b;
  }

  // Would a new block of `rounded` bytes be granted right now? Returns the shortfall, 0 if none.
  std::uint64_t shortfall(std::uint64_t rounded) const {
    const std::uint64_t room = managed() < limit ? limit - managed() : 0;
    if (rounded > room) return rounded - room;
    if (managed() + rounded > capacity) return rounded;  // the allocator only says "no"
    return 0;
  }

  // Predicts allocate(size). Returns true if it succeeds (and records the block as live).
  bool allocate(std::uint64_t size) {
    if (size == 0) return true;
    const std::uint64_t rounded = rounded_size(size, leading_bits);
    auto hit = held.find(rounded);
    if (hit == held.end()) {
      std::uint64_t missing = shortfall(rounded);
      if (missing != 0 && free_largest(missing) != 0) missing = shortfall(rounded);
      if (missing != 0 && free_largest(unlimited) != 0) missing = shortfall(rounded);
      if (missing != 0) return false;
    } else if (--hit->second == 0) {
      held.erase(hit);
    }
    live.push_back({size, rounded});
    return true;
  }

  void release(std::size_t index) {
    const live_block b = live[index];
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(index));
    if (!holding) return;
    ++held[b.rounded];
    if (trim.enabled() && held_bytes() > budget()) free_largest(held_bytes() - budget());
  }
};

struct system_under_test {
  std::shared_ptr<fake_device> device;
  std::unique_ptr<pool_t> pool;
  std::vector<pool_t::allocation> live;
};

using command = rc::state::Command<model, system_under_test>;

void check_matches(const model& m, const system_under_test& s) {
  const pool_counters c = s.pool->counters();
  RC_ASSERT(c.active_blocks == m.live.size());
  RC_ASSERT(c.active_bytes == m.active_bytes());
  RC_ASSERT(c.active_rounded_bytes == m.active_rounded());
  RC_ASSERT(c.held_blocks == m.held_blocks());
  RC_ASSERT(c.held_bytes == m.held_bytes());
  RC_ASSERT(c.managed_bytes == m.managed());
  RC_ASSERT(c.limit_bytes == m.limit);
  RC_ASSERT(s.device->outstanding_bytes() == c.managed_bytes);
  RC_ASSERT(c.managed_bytes <= m.limit);
  std::map<std::uint64_t, std::uint64_t> held;
  for (const held_bin_summary& bin : s.pool->held_bins()) held[bin.block_bytes] = bin.blocks;
  RC_ASSERT(held == m.held);
  RC_ASSERT(s.pool->state_is_valid());
  RC_ASSERT(s.device->errors().empty());
  RC_ASSERT(s.live.size() == m.live.size());
  for (std::size_t i = 0; i < s.live.size(); ++i) {
    RC_ASSERT(s.live[i].size() == m.live[i].size);
    RC_ASSERT(s.live[i].rounded_size() == m.live[i].rounded);
    RC_ASSERT(s.device->is_outstanding(s.live[i].handle()));
  }
}

struct allocate_cmd : command {
  std::uint64_t size = 0;
  explicit allocate_cmd(const model& m) : size(*testgen::request_size(m.capacity * 2)) {}

  void apply(model& m) const override { m.allocate(size); }

  void run(const model& m, system_under_test& s) const override {
    model expected = m;
    const bool succeeds = expected.allocate(size);
    if (succeeds) {
      auto a = s.pool->allocate(size);
      if (size != 0) s.live.push_back(std::move(a));
    } else {
      const pool_counters before = s.pool->counters();
      try {
        auto a = s.pool->allocate(size);
        RC_FAIL("allocate(" + std::to_string(size) + ") succeeded; the model expected OOM");
      } catch (const out_of_memory& e) {
        RC_ASSERT(e.report().requested_bytes == size);
        RC_ASSERT(e.report().rounded_bytes == rounded_size(size, m.leading_bits));
        RC_ASSERT(e.report().active_bytes == before.active_bytes);
        RC_ASSERT(e.report().held_bytes == 0u);  // everything held was freed trying
        RC_ASSERT(e.report().limit_bytes == m.limit);
        // The guarantee: OOM only if the request cannot fit even with nothing held.
        const std::uint64_t rounded = rounded_size(size, m.leading_bits);
        RC_ASSERT(before.active_rounded_bytes + rounded > std::min(m.capacity, m.limit));
      }
    }
    check_matches(expected, s);
  }

  void show(std::ostream& os) const override { os << "allocate(" << size << ")"; }
};

struct release_cmd : command {
  std::size_t pick = 0;
  explicit release_cmd(const model& m) {
    RC_PRE(!m.live.empty());
    pick = *testgen::uniform<std::size_t>(0, m.live.size());
  }
  void checkPreconditions(const model& m) const override { RC_PRE(pick < m.live.size()); }
  void apply(model& m) const override { m.release(pick); }
  void run(const model& m, system_under_test& s) const override {
    model expected = m;
    expected.release(pick);
    s.live[pick].release();
    s.live[pick].release();  // a second release must be a no-op
    s.live.erase(s.live.begin() + static_cast<std::ptrdiff_t>(pick));
    check_matches(expected, s);
  }
  void show(std::ostream& os) const override { os << "release(#" << pick << ")"; }
};

struct free_held_cmd : command {
  void apply(model& m) const override { m.held.clear(); }
  void run(const model& m, system_under_test& s) const override {
    model expected = m;
    apply(expected);
    s.pool->free_held();
    check_matches(expected, s);
  }
  void show(std::ostream& os) const override { os << "free_held()"; }
};

struct stop_holding_cmd : command {
  stop_holding_cmd() {
    // Holding never comes back, so a sequence that stops early tests little else: keep it rare.
    RC_PRE(*testgen::uniform(0, 8) == 0);
  }
  void apply(model& m) const override {
    m.held.clear();
    m.holding = false;
  }
  void run(const model& m, system_under_test& s) const override {
    model expected = m;
    apply(expected);
    s.pool->stop_holding();
    RC_ASSERT(!s.pool->is_holding());
    check_matches(expected, s);
  }
  void show(std::ostream& os) const override { os << "stop_holding()"; }
};

struct set_limit_cmd : command {
  std::uint64_t limit = 0;
  explicit set_limit_cmd(const model& m)
      : limit(*rc::gen::weightedOneOf<std::uint64_t>(
            {{4, testgen::uniform<std::uint64_t>(0, m.capacity + 1)},
             {1, rc::gen::just(unlimited)}})) {}
  void apply(model& m) const override {
    if (limit < m.active_rounded()) return;  // rejected, nothing changes
    m.limit = limit;
    if (m.managed() > limit) m.free_largest(m.managed() - limit);
  }
  void run(const model& m, system_under_test& s) const override {
    model expected = m;
    apply(expected);
    if (limit < m.active_rounded()) {
      RC_ASSERT_THROWS_AS(s.pool->set_limit(limit), argument_error);
    } else {
      s.pool->set_limit(limit);
    }
    check_matches(expected, s);
  }
  void show(std::ostream& os) const override { os << "set_limit(" << limit << ")"; }
};

struct trim_cmd : command {
  std::uint64_t target = 0;
  explicit trim_cmd(const model& m) : target(*testgen::uniform<std::uint64_t>(0, m.capacity + 1)) {}
  void apply(model& m) const override {
    if (m.held_bytes() > target) m.free_largest(m.held_bytes() - target);
  }
  void run(const model& m, system_under_test& s) const override {
    model expected = m;
    apply(expected);
    const std::uint64_t freed = s.pool->trim(target);
    RC_ASSERT(freed == m.held_bytes() - expected.held_bytes());
    check_matches(expected, s);
  }
  void show(std::ostream& os) const override { os << "trim(" << target << ")"; }
};

struct set_trim_policy_cmd : command {
  trim_policy policy;
  explicit set_trim_policy_cmd(const model& m) {
    policy.max_held_bytes = *rc::gen::weightedOneOf<std::uint64_t>(
        {{1, testgen::uniform<std::uint64_t>(0, m.capacity + 1)}, {2, rc::gen::just(unlimited)}});
    policy.max_held_to_active_ratio = *rc::gen::element(-1.0, 0.0, 0.5, 1.0, 2.0);
  }
  void apply(model& m) const override {
    m.trim = policy;
    if (m.trim.enabled() && m.held_bytes() > m.budget())
      m.free_largest(m.held_bytes() - m.budget());
  }
  void run(const model& m, system_under_test& s) const override {
    model expected = m;
    apply(expected);
    s.pool->set_trim_policy(policy);
    check_matches(expected, s);
  }
  void show(std::ostream& os) const override {
    os << "set_trim_policy(max_held=" << policy.max_held_bytes
       << ", ratio=" << policy.max_held_to_active_ratio << ")";
  }
};

RC_GTEST_PROP(PoolModel, HeldActiveBookkeepingMatchesTheModel, ()) {
  model initial;
  initial.capacity = *rc::gen::element<std::uint64_t>(1 << 12, 1 << 16, 1 << 20, 3 << 20);
  initial.leading_bits = *rc::gen::element(0u, 1u, 2u, 4u, 8u);
  auto device = std::make_shared<fake_device>(initial.capacity);
  system_under_test sut{
      device,
      std::make_unique<pool_t>(fake_allocator{device},
                               pool_options{.leading_bits = initial.leading_bits}),
      {}};
  rc::state::check(
      initial, sut,
      // Weighted by repetition: mostly allocate and release, so pools fill up and
      // hold many bins before the rarer commands reshape them.
      rc::state::gen::execOneOfWithArgs<allocate_cmd, allocate_cmd, allocate_cmd, allocate_cmd,
                                        allocate_cmd, allocate_cmd, release_cmd, release_cmd,
                                        release_cmd, release_cmd, free_held_cmd, stop_holding_cmd,
                                        set_limit_cmd, trim_cmd, set_trim_policy_cmd>());
  // Teardown: nothing may leak, whichever order things go in.
  const bool pool_first = *rc::gen::arbitrary<bool>();
  if (pool_first) sut.pool.reset();
  sut.live.clear();
  sut.pool.reset();
  RC_ASSERT(device->outstanding_bytes() == 0u);
  RC_ASSERT(device->outstanding_blocks() == 0u);
  RC_ASSERT(device->errors().empty());
}

}  // namespace
}  // namespace clpool
