#include "trace/pool_recorder.h"

#include <memory>
#include <random>
#include <sstream>
#include <unordered_map>

#include <gtest/gtest.h>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"
#include "replay/replay.h"
#include "trace/trace_reader.h"

namespace clpool::trace {
namespace {

using pool_type = memory_pool<testing::fake_allocator>;

// Runs a random workload on `pool` (allocations, frees, free_held), recording out-of-memory
// failures as the program would see them.
void workload(pool_type& pool, unsigned seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<pool_type::allocation> live;
  for (int i = 0; i < n; ++i) {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    if (r < 55 || live.empty()) {
      try {
        live.push_back(pool.allocate(rng() % 3 == 0 ? rng() % (1 << 20) : rng() % 4096 + 1));
      } catch (const out_of_memory&) {
      }
    } else if (r < 98) {
      const std::size_t k = rng() % live.size();
      live[k] = std::move(live.back());
      live.pop_back();
    } else {
      pool.free_held();
    }
  }
}

struct recorded {
  std::string text;
  pool_statistics stats;
};

recorded record(unsigned seed, unsigned lb, std::uint64_t capacity, trim_policy trim = {}) {
  std::ostringstream out;
  pool_statistics stats;
  {
    trace_writer writer(out);
    testing::fake_allocator alloc;
    alloc.device->set_capacity(capacity);
    pool_type pool(alloc, pool_options{lb, unlimited, trim});
    auto recorder = std::make_shared<pool_recorder>(writer);
    pool.set_observer(recorder);
    workload(pool, seed, 5000);
    stats = pool.statistics();
    pool.set_observer(nullptr);
    EXPECT_EQ(recorder->error(), "");
  }
  return {out.str(), stats};
}

TEST(PoolRecorder, ReplayGivesTheSameCounters) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    for (unsigned lb : {1u, 4u}) {
      trim_policy trim;
      if (seed % 2 == 0) trim.max_held_to_active_ratio = 0.5;
      const recorded rec = record(seed, lb, unlimited, trim);
      trace_reader reader = trace_reader::from_string(rec.text, "recorded");
      replay::replay_config config;
      config.leading_bits = lb;
      config.trim = trim;
      const replay::replay_report r = replay::replay_stream(reader, config, replay::device_spec{});
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r.hits, rec.stats.hits) << "seed " << seed;
      EXPECT_EQ(r.misses, rec.stats.misses);
      EXPECT_EQ(r.allocator_allocations, rec.stats.allocator_allocations);
      EXPECT_EQ(r.allocator_frees, rec.stats.allocator_frees);
      EXPECT_EQ(r.peak_active_bytes, rec.stats.peak_active_bytes);
      EXPECT_EQ(r.peak_managed_bytes, rec.stats.peak_managed_bytes);
    }
  }
}

TEST(PoolRecorder, RecordsOutOfMemoryAsAllocFailed) {
  const recorded rec = record(11, 4, 4 << 20);
  ASSERT_GT(rec.stats.ooms_raised, 0u) << "the workload must overflow a 4 MiB device";
  const read_result all = read_all_from_string(rec.text, "recorded");
  ASSERT_FALSE(all.error) << all.error->what();
  std::uint64_t failed = 0;
  for (const auto& e : all.events) failed += e.action == trace_action::alloc_failed;
  EXPECT_EQ(failed, rec.stats.ooms_raised);
  // Replayed on the same device, it fails at the first recorded failure.
  trace_reader reader = trace_reader::from_string(rec.text, "recorded");
  const replay::replay_report r =
      replay::replay_stream(reader, {}, {4 << 20, replay::alloc_semantics::immediate});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.oom->recorded_failure);
  std::uint64_t first_failed = 0;
  while (all.events[first_failed].action != trace_action::alloc_failed) ++first_failed;
  EXPECT_EQ(r.oom->event_index, first_failed);
}

// Installed on a pool with live allocations: their releases are left out (a trace frees only what
// it allocated), and the replay accepts what is written.
TEST(PoolRecorder, ReleasesOfAllocationsMadeBeforeItAreLeftOut) {
  std::ostringstream out;
  {
    trace_writer writer(out);
    testing::fake_allocator alloc;
    pool_type pool(alloc, pool_options{});
    std::vector<pool_type::allocation> before;
    for (int i = 0; i < 3; ++i) before.push_back(pool.allocate(4096));
    auto recorder = std::make_shared<pool_recorder>(writer);
    pool.set_observer(recorder);
    pool_type::allocation during = pool.allocate(100);
    before.clear();  // three releases the trace never allocated
    during.release();
    pool.set_observer(nullptr);
    EXPECT_EQ(recorder->error(), "");
    EXPECT_EQ(recorder->events_recorded(), 2u);
  }
  const read_result all = read_all_from_string(out.str(), "recorded");
  ASSERT_FALSE(all.error) << all.error->what();
  ASSERT_EQ(all.events.size(), 2u);
  EXPECT_EQ(all.events[0].action, trace_action::alloc);
  EXPECT_EQ(all.events[1].action, trace_action::free);
  EXPECT_EQ(all.events[1].id, all.events[0].id);
  trace_reader reader = trace_reader::from_string(out.str(), "recorded");
  EXPECT_TRUE(replay::replay_stream(reader, {}, replay::device_spec{}).ok());
}

TEST(PoolRecorder, WriteErrorsAreKeptNotThrown) {
  std::ostringstream out;
  trace_writer writer(out);
  pool_recorder recorder(writer);
  out.setstate(std::ios::badbit);
  pool_event e;
  e.kind = pool_event_kind::miss;
  e.allocation_id = 1;
  e.bytes = 10;
  for (int i = 0; i < 5000; ++i) {  // enough to fill the writer's buffer and hit the bad stream
    e.allocation_id = static_cast<std::uint64_t>(i) + 1;
    recorder.on_event(e);
  }
  EXPECT_NE(recorder.error(), "");
}

}  // namespace
}  // namespace clpool::trace
