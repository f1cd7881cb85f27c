#include "replay/replay.h"

#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace clpool::replay {
namespace {

using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

// Builds events with increasing seq.
struct events_builder {
  std::vector<trace_event> events;
  events_builder& add(trace_action a, std::uint64_t id, std::uint64_t size,
                      trace_kind kind = trace_kind::buffer) {
    trace_event e;
    e.seq = events.size();
    e.action = a;
    e.id = id;
    e.size = size;
    e.kind = kind;
    events.push_back(e);
    return *this;
  }
  events_builder& alloc(std::uint64_t id, std::uint64_t size) {
    return add(trace_action::alloc, id, size);
  }
  events_builder& free(std::uint64_t id) { return add(trace_action::free, id, 0); }
  events_builder& release(std::uint64_t id) { return add(trace_action::release, id, 0); }
  events_builder& wait() { return add(trace_action::wait, 0, 0); }
  events_builder& use(std::uint64_t id, std::uint64_t size) {
    return add(trace_action::use, id, size);
  }
};

// A replay of `events` whose trace records the first uses of `kinds` (its first_uses comment).
replay_report replay_with_uses(const std::vector<trace_event>& events, const replay_config& c,
                               const device_spec& device, std::string_view kinds,
                               const replay_options& o = {}) {
  replayer r(c, device, o);
  r.set_first_use_kinds(kinds);
  for (const trace_event& e : events) {
    if (!r.apply(e)) break;
  }
  return r.report();
}

replay_config pool_lb(unsigned lb) {
  replay_config c;
  c.leading_bits = lb;
  return c;
}

TEST(Replay, CleanRunCountsHitsMissesAndPeaks) {
  events_builder b;
  b.alloc(1, 1000).alloc(2, 2000).free(1).alloc(3, 1000).free(2).free(3);
  const replay_report r =
      replay_events(b.events, pool_lb(12), {1 << 20, alloc_semantics::immediate});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.events, 6u);
  EXPECT_EQ(r.allocs, 3u);
  EXPECT_EQ(r.frees, 3u);
  EXPECT_EQ(r.hits, 1u);
  EXPECT_EQ(r.misses, 2u);
  EXPECT_DOUBLE_EQ(r.hit_rate(), 1.0 / 3);
  EXPECT_EQ(r.allocator_allocations, 2u);
  EXPECT_EQ(r.peak_active_bytes, 3000u);
  EXPECT_EQ(r.peak_managed_bytes, 3000u);
  EXPECT_EQ(r.peak_device_bytes, 3000u);
}

TEST(Replay, FreeHeldRetryRescuesAnImmediateFailure) {
  events_builder b;
  b.alloc(1, 60).free(1).alloc(2, 50);  // 60 held + 50 > 100: the retry frees the held 60
  const replay_report r = replay_events(b.events, pool_lb(12), {100, alloc_semantics::immediate});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.rescued_requests, 1u);
  EXPECT_EQ(r.oom_retries, 1u);
  EXPECT_EQ(r.allocator_failures, 1u);
}

// Version 4 (FORMAT.md "First uses"): on a deferred device a buffer commits at its first use.
TEST(Replay, ABufferCommitsAtItsRecordedFirstUse) {
  replay_config nopool;
  nopool.use_pool = false;
  const device_spec deferred{100, alloc_semantics::deferred};
  events_builder late;  // 60 + 60 never committed at once
  late.alloc(1, 60).use(1, 60).alloc(2, 60).free(1).use(2, 60).free(2);
  const replay_report r = replay_with_uses(late.events, nopool, deferred, "buffer");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.peak_device_bytes, 60u);
  EXPECT_EQ(r.uses, 2u);
  EXPECT_EQ(r.first_use_kinds, "buffer");
  // Without its first uses each buffer counts from its creation: the second does not fit.
  const replay_report made = replay_with_uses(late.events, nopool, deferred, "");
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.oom->event_index, 2u);
  EXPECT_EQ(made.oom->action, trace_action::alloc);
  EXPECT_EQ(made.first_use_kinds, "");
  // First uses recorded for SVM only leave buffers as they were; unknown words are ignored.
  EXPECT_FALSE(replay_with_uses(late.events, nopool, deferred, "svm").ok());
  EXPECT_TRUE(replay_with_uses(late.events, nopool, deferred, "image buffer").ok());
  // Words are blank-separated: spaces or tabs, any number of them.
  EXPECT_TRUE(replay_with_uses(late.events, nopool, deferred, "svm\tbuffer").ok());
  EXPECT_EQ(replay_with_uses(late.events, nopool, deferred, "  buffer\t svm ").first_use_kinds,
            "buffer svm");
  EXPECT_FALSE(replay_with_uses(late.events, nopool, deferred, "buffers").ok());
  // A device that commits at allocation takes no notice of them.
  EXPECT_FALSE(
      replay_with_uses(late.events, nopool, {100, alloc_semantics::immediate}, "buffer").ok());
}

TEST(Replay, ABufferNeverUsedTakesNothingAndAUseThatDoesNotFitIsTheFailure) {
  replay_config nopool;
  nopool.use_pool = false;
  const device_spec deferred{100, alloc_semantics::deferred};
  events_builder unused;
  unused.alloc(1, 90).alloc(2, 90).free(1).free(2);
  const replay_report idle = replay_with_uses(unused.events, nopool, deferred, "buffer");
  EXPECT_TRUE(idle.ok());
  EXPECT_EQ(idle.peak_device_bytes, 0u);
  events_builder both;
  both.alloc(1, 60).use(1, 60).alloc(2, 60).use(2, 60).use(2, 60);
  const replay_report r = replay_with_uses(both.events, nopool, deferred, "buffer");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->event_index, 3u);
  EXPECT_EQ(r.oom->site, oom_site::first_use);
  EXPECT_EQ(r.oom->action, trace_action::use);
  EXPECT_EQ(r.oom->requested_bytes, 60u);
  EXPECT_EQ(r.oom->active_bytes, 120u) << "both buffers are the program's";
  EXPECT_EQ(r.oom->device_used_bytes, 60u);
  // The failing buffer is live but unused: the capacity's sum leaves it out, and still adds up.
  EXPECT_EQ(r.oom->unused_bytes, 60u);
  const std::optional<capacity_sum> sum = capacity_sum_at(*r.oom, r.device, false);
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->live_requested, 60u);
  EXPECT_EQ(sum->unused, 60u);
  EXPECT_EQ(sum->live_requested + sum->page_rounding + sum->other, sum->device_used);
  // With a pool: a held block the pool hands out again is committed already.
  events_builder reuse;
  reuse.alloc(1, 60).use(1, 60).free(1).alloc(2, 60).use(2, 60);
  const replay_report pooled = replay_with_uses(reuse.events, pool_lb(12), deferred, "buffer");
  EXPECT_TRUE(pooled.ok());
  EXPECT_EQ(pooled.peak_device_bytes, 60u);
  // ... and one the program let go before a bigger one's first use is held, committed.
  events_builder held;
  held.alloc(1, 60).use(1, 60).free(1).alloc(2, 70).use(2, 70);
  const replay_report full = replay_with_uses(held.events, pool_lb(12), deferred, "buffer");
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.oom->site, oom_site::first_use);
  EXPECT_EQ(full.oom->held_bytes, 60u);
}

// On a device that defers allocation, a pool whose allocator commits each buffer at once
// (alloc=immediate, PyOpenCL's ImmediateAllocator) sees the failure inside its allocation, frees
// what it holds and retries; one whose allocator leaves committing to the device (the default)
// does not, and runs out at the first use. Traces with and without recorded first uses alike.
TEST(Replay, APoolWhoseAllocatorCommitsAtOnceFreesAndRetriesOnADeferredDevice) {
  replay_config deferred_alloc = pool_lb(12), immediate_alloc = pool_lb(12);
  immediate_alloc.immediate_allocator = true;
  const device_spec deferred{100, alloc_semantics::deferred};
  events_builder held;
  held.alloc(1, 60).use(1, 60).free(1).alloc(2, 70).use(2, 70).free(2).alloc(3, 60).use(3, 60);
  for (const char* uses : {"buffer", ""}) {
    SCOPED_TRACE(uses);
    const replay_report lost = replay_with_uses(held.events, deferred_alloc, deferred, uses);
    ASSERT_FALSE(lost.ok());
    EXPECT_EQ(lost.oom->site, oom_site::first_use);
    const replay_report saved = replay_with_uses(held.events, immediate_alloc, deferred, uses);
    EXPECT_TRUE(saved.ok()) << saved.oom->message;
    EXPECT_EQ(saved.oom_retries, 2u) << "the 70 gets the 60's room, then the 60 the 70's";
    EXPECT_EQ(saved.rescued_requests, 2u);
    EXPECT_EQ(saved.peak_device_bytes, 70u);
    EXPECT_EQ(to_string(saved.config), "pool:lb=12,alloc=immediate");
  }
  // When nothing the pool holds would make room, the failure is the allocator's, with its words.
  events_builder big;
  big.alloc(1, 60).use(1, 60).alloc(2, 70).use(2, 70);
  const replay_report r = replay_with_uses(big.events, immediate_alloc, deferred, "buffer");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->site, oom_site::allocator);
  EXPECT_EQ(r.oom->event_index, 2u);
  EXPECT_NE(r.oom->message.find("as the pool's allocator commits it at once (alloc=immediate)"),
            std::string::npos)
      << r.oom->message;
  // On a device that commits at allocation anyway, alloc=immediate changes nothing.
  const device_spec immediate{100, alloc_semantics::immediate};
  EXPECT_EQ(replay_with_uses(held.events, immediate_alloc, immediate, "").peak_device_bytes,
            replay_with_uses(held.events, deferred_alloc, immediate, "").peak_device_bytes);
}

// A pooled block keeps what the device did with it. Handed out again after a use, it is committed:
// in the capacity's sum and in its site. Freed before any use, the pool holds it but the device
// holds nothing: neither in the sum's held bytes nor among the held sites. A block no command has
// used yet is in no site.
TEST(Replay, APooledBlockKeepsWhetherTheDeviceCommittedIt) {
  const device_spec deferred{100, alloc_semantics::deferred};
  replay_options o;
  o.sites = true;
  const auto sum_adds_up = [](const replay_report& r) {
    const std::optional<capacity_sum> s = capacity_sum_at(*r.oom, r.device, true);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->other, 0u);
    EXPECT_EQ(s->live_requested + s->bin_rounding + s->held + s->page_rounding, s->device_used);
  };
  events_builder reuse;  // 1's block, used, goes to 2; 3 does not fit at its use
  reuse.alloc(1, 40).use(1, 40).free(1).alloc(2, 40).alloc(3, 70).use(3, 70);
  reuse.events[0].stack = 7, reuse.events[3].stack = 8, reuse.events[4].stack = 9;
  const replay_report r = replay_with_uses(reuse.events, pool_lb(12), deferred, "buffer", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->action, trace_action::use);
  EXPECT_EQ(r.oom->unused_bytes, 70u) << "2's block was committed by 1's use";
  EXPECT_EQ(r.oom->held_unused_bytes, 0u);
  sum_adds_up(r);
  ASSERT_EQ(r.oom->live_sites.size(), 1u);
  EXPECT_EQ(r.oom->live_sites[0].stack, 8u);
  EXPECT_EQ(r.oom->live_sites[0].requested_bytes, 40u);

  events_builder idle;  // 1 is freed unused: held, nothing on the device; 3 does not fit
  idle.alloc(1, 40).free(1).alloc(2, 70).use(2, 70).alloc(3, 50).use(3, 50);
  idle.events[0].stack = 7, idle.events[2].stack = 8, idle.events[4].stack = 9;
  const replay_report h = replay_with_uses(idle.events, pool_lb(12), deferred, "buffer", o);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.oom->held_bytes, 40u);
  EXPECT_EQ(h.oom->held_unused_bytes, 40u);
  EXPECT_EQ(h.oom->unused_bytes, 50u);
  EXPECT_EQ(h.oom->device_used_bytes, 70u);
  sum_adds_up(h);
  EXPECT_EQ(capacity_sum_at(*h.oom, h.device, true)->held_unused, 40u);
  EXPECT_TRUE(h.oom->held_sites.empty());
  ASSERT_EQ(h.oom->live_sites.size(), 1u);
  EXPECT_EQ(h.oom->live_sites[0].stack, 8u);

  events_builder again;  // 1's unused block goes to 2, which uses it; 3 does not fit
  again.alloc(1, 40).free(1).alloc(2, 40).use(2, 40).alloc(3, 70).use(3, 70);
  again.events[0].stack = 7, again.events[2].stack = 8, again.events[4].stack = 9;
  const replay_report a = replay_with_uses(again.events, pool_lb(12), deferred, "buffer", o);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.oom->held_unused_bytes, 0u);
  EXPECT_EQ(a.oom->unused_bytes, 70u);
  sum_adds_up(a);
  ASSERT_EQ(a.oom->live_sites.size(), 1u);
  EXPECT_EQ(a.oom->live_sites[0].stack, 8u);

  // A held block no command used, handed out to an SVM request whose commit fails: handed out,
  // it is no longer held (the sum's held bytes do not wrap round).
  events_builder svm;
  svm.alloc(3, 70).use(3, 70).alloc(1, 40).free(1).add(trace_action::alloc, 2, 40, trace_kind::svm);
  device_spec deferred_svm = deferred;
  deferred_svm.profile.svm_oom_at = device_model::refusal_point::creation;
  const replay_report s = replay_with_uses(svm.events, pool_lb(12), deferred_svm, "buffer", o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.oom->held_unused_bytes, 0u);
  sum_adds_up(s);
  // A recorded failure that fits: its block goes straight back to the pool, never used.
  events_builder failed;
  failed.add(trace_action::alloc_failed, 9, 40).alloc(1, 70).use(1, 70).alloc(2, 50).use(2, 50);
  const replay_report f = replay_with_uses(failed.events, pool_lb(12), deferred, "buffer", o);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.oom->held_bytes, 40u);
  EXPECT_EQ(f.oom->held_unused_bytes, 40u);
  sum_adds_up(f);

  events_builder end;  // at the end: 2 never used, in the active figures and in no site
  end.alloc(1, 40).use(1, 40).alloc(2, 30);
  end.events[0].stack = 7, end.events[2].stack = 8;
  for (const bool pool : {true, false}) {
    replay_config c = pool_lb(12);
    c.use_pool = pool;
    const replay_report e = replay_with_uses(end.events, c, deferred, "buffer", o);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e.end_active_bytes, 70u);
    EXPECT_EQ(e.end_unused_bytes, 30u);
    EXPECT_EQ(e.end_unused_blocks, 1u);
    ASSERT_EQ(e.end_live_sites.size(), 1u);
    EXPECT_EQ(e.end_live_sites[0].stack, 7u);
  }
}

TEST(Replay, DeferredFailureIsNotRescuedByTheRetry) {
  events_builder b;
  b.alloc(1, 60).free(1).alloc(2, 50);
  const replay_report r = replay_events(b.events, pool_lb(12), {100, alloc_semantics::deferred});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->site, oom_site::first_use);
  EXPECT_EQ(r.oom->event_index, 2u);
  EXPECT_EQ(r.oom->requested_bytes, 50u);
  EXPECT_EQ(r.oom->held_bytes, 60u) << "the held block still occupies the device";
  EXPECT_EQ(r.oom->held_before_bytes, 60u);
  EXPECT_EQ(r.oom->active_bytes, 0u);
  EXPECT_EQ(r.oom->device_used_bytes, 60u);
  EXPECT_EQ(r.rescued_requests, 0u);
}

// A request whose block the device cannot commit at first use is counted alike with and without a
// pool: it was never active (the peak is what was live before it) and it is no hit or miss; the
// allocator call that made its block is a failed one.
TEST(Replay, ADeferredFailureIsNotActiveAndItsAllocatorCallFailed) {
  events_builder b;
  b.alloc(1, 60).alloc(2, 30).free(2).alloc(3, 50);
  for (const replay_config& c : {pool_lb(12), replay_config{.use_pool = false}}) {
    const replay_report r = replay_events(b.events, c, {100, alloc_semantics::deferred});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.oom->site, oom_site::first_use);
    EXPECT_EQ(r.oom->event_index, 3u);
    EXPECT_EQ(r.oom->active_bytes, 60u);
    EXPECT_EQ(r.peak_active_bytes, 90u) << c.use_pool << ": the live blocks before the failure";
    EXPECT_EQ(r.peak_active_event, 1u);
    EXPECT_EQ(r.end_active_blocks, 1u);
    EXPECT_EQ(r.allocator_allocations, 2u) << c.use_pool;
    EXPECT_EQ(r.allocator_failures, 1u) << c.use_pool;
    EXPECT_EQ(r.hits + r.misses, c.use_pool ? 2u : 0u);
  }
}

// An SVM block on a device that defers buffers but refuses SVM at clSVMAlloc (svm_oom_at =
// creation, as nvidia's profile says): committed as it is allocated, so a pool's free-held retry
// rescues it where it cannot rescue a buffer, and without a pool its failure is the allocator's.
TEST(Replay, SvmBlocksAreRefusedWhereTheProfileSays) {
  device_model::device_profile profile;
  profile.oom_at = device_model::refusal_point::first_use;
  const device_spec dev{
      .capacity = 100, .semantics = alloc_semantics::deferred, .profile = profile};
  events_builder svm;
  svm.add(trace_action::alloc, 1, 60, trace_kind::svm)
      .free(1)
      .add(trace_action::alloc, 2, 50, trace_kind::svm);
  const replay_report pooled = replay_events(svm.events, pool_lb(12), dev);
  EXPECT_TRUE(pooled.ok());
  EXPECT_EQ(pooled.rescued_requests, 1u);
  events_builder buffers;
  buffers.alloc(1, 60).free(1).alloc(2, 50);
  EXPECT_FALSE(replay_events(buffers.events, pool_lb(12), dev).ok()) << "a deferred buffer";

  events_builder two;
  two.add(trace_action::alloc, 1, 60, trace_kind::svm)
      .add(trace_action::alloc, 2, 50, trace_kind::svm);
  const replay_config nopool{.use_pool = false};
  const replay_report raw = replay_events(two.events, nopool, dev);
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.oom->site, oom_site::allocator);
  EXPECT_EQ(raw.oom->event_index, 1u);
  EXPECT_NE(raw.oom->message.find("at clSVMAlloc (svm_oom_at = creation)"), std::string::npos)
      << raw.oom->message;
  EXPECT_EQ(raw.allocator_failures, 1u);
  // svm_oom_at = first_use: the block is refused at its first use, as a buffer is.
  device_spec first_use = dev;
  first_use.profile.svm_oom_at = device_model::refusal_point::first_use;
  const replay_report late = replay_events(two.events, nopool, first_use);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.oom->site, oom_site::first_use);
  EXPECT_FALSE(replay_events(svm.events, pool_lb(12), first_use).ok());
}

TEST(Replay, OomReportShowsRoundingAndHeldBytes) {
  // lb=0: every size rounds up to the next power of two minus one... e.g. 600 -> 1023.
  events_builder b;
  b.alloc(1, 600).alloc(2, 300).free(2).alloc(3, 2000);
  const replay_report r = replay_events(b.events, pool_lb(0), {2500, alloc_semantics::immediate});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->site, oom_site::allocator);
  EXPECT_EQ(r.oom->event_index, 3u);
  EXPECT_EQ(r.oom->rounded_bytes, 2047u);
  EXPECT_EQ(r.oom->active_bytes, 600u);
  EXPECT_EQ(r.oom->active_rounded_bytes, 1023u);
  EXPECT_EQ(r.oom->rounding_loss_bytes, 423u);
  EXPECT_EQ(r.oom->held_before_bytes, 511u) << "block of id 2 was held in another bin";
  EXPECT_EQ(r.oom->held_bytes, 0u) << "the retry freed it";
  EXPECT_GE(r.oom->retries, 1u);
  EXPECT_EQ(r.oom->capacity, 2500u);
  EXPECT_FALSE(r.oom->recorded_failure);
}

TEST(Replay, LimitCause) {
  replay_config c = pool_lb(12);
  c.limit = 100;
  events_builder b;
  b.alloc(1, 60).alloc(2, 50);
  const replay_report r = replay_events(b.events, c, {1 << 20, alloc_semantics::immediate});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->site, oom_site::limit);
  EXPECT_EQ(r.oom->limit, 100u);
}

TEST(Replay, NoPoolGoesStraightToTheDevice) {
  replay_config c;
  c.use_pool = false;
  events_builder b;
  b.alloc(1, 60).free(1).alloc(2, 50).alloc(3, 51);
  const replay_report r = replay_events(b.events, c, {100, alloc_semantics::immediate});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->event_index, 3u);
  EXPECT_EQ(r.oom->active_bytes, 50u);
  EXPECT_EQ(r.oom->rounded_bytes, 51u);
  EXPECT_EQ(r.allocator_allocations, 2u);
  EXPECT_EQ(r.allocator_frees, 1u);
  EXPECT_EQ(r.peak_active_bytes, 60u);
  EXPECT_EQ(r.hits + r.misses, 0u);
}

TEST(Replay, RecordedFailures) {
  events_builder b;
  b.alloc(1, 60).add(trace_action::alloc_failed, 0, 30).add(trace_action::alloc_failed, 0, 50);
  const replay_report r = replay_events(b.events, pool_lb(12), {100, alloc_semantics::immediate});
  EXPECT_EQ(r.recorded_failures, 2u);
  EXPECT_EQ(r.recorded_failures_that_fit, 1u);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.oom->recorded_failure);
  EXPECT_EQ(r.oom->event_index, 2u);
}

// A trace, text or binary, whose alloc_failed events carry the layer's failure comments: a size
// refusal (-61, seq 1), an out-of-memory (-4, seq 3), and a -61 comment that names another seq
// (so belongs to no event here), then a 1 MiB block.
std::string refusals_trace(trace::trace_encoding encoding) {
  std::ostringstream out;
  {
    trace::trace_writer w(out, encoding);
    w.write({.seq = 0, .action = trace_action::alloc, .id = 1, .size = 1 << 20});
    w.write({.seq = 1, .action = trace_action::alloc_failed, .id = 2, .size = 16 << 20});
    w.comment("failure",
              "seq 1 status -61 (CL_INVALID_BUFFER_SIZE) from the layer: above "
              "CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8388608 bytes");
    w.write({.seq = 2, .action = trace_action::free, .id = 1, .size = 1 << 20});
    w.write({.seq = 3, .action = trace_action::alloc_failed, .id = 3, .size = 6 << 20});
    w.comment("failure", "seq 3 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer");
    w.write({.seq = 4, .action = trace_action::alloc_failed, .id = 4, .size = 32 << 20});
    w.comment("failure", "seq 1 status -61 (CL_INVALID_BUFFER_SIZE) from the driver");
    w.write({.seq = 5, .action = trace_action::alloc, .id = 5, .size = 1 << 20});
  }  // the writer flushes as it goes out of scope
  return out.str();
}

// A request the recorded device refused for its size involved no memory: the replay counts it and
// allocates nothing, at any capacity, so it is neither its out-of-memory nor a failure that fits.
// An out-of-memory, and an alloc_failed whose comment is another event's, are replayed as before.
TEST(Replay, ASizeRefusalIsCountedAndNotReplayed) {
  for (const auto encoding : {trace::trace_encoding::text, trace::trace_encoding::binary}) {
    SCOPED_TRACE(encoding == trace::trace_encoding::text ? "text" : "binary");
    const auto replay_at = [&](std::uint64_t capacity) {
      trace::trace_reader reader = trace::trace_reader::from_string(refusals_trace(encoding));
      return replay_stream(reader, pool_lb(12), {capacity, alloc_semantics::immediate});
    };
    const replay_report big = replay_at(64 << 20);
    ASSERT_TRUE(big.ok());
    EXPECT_EQ(big.events, 6u);
    EXPECT_EQ(big.recorded_size_refusals, 1u);
    EXPECT_EQ(big.recorded_failures, 2u);
    EXPECT_EQ(big.recorded_failures_that_fit, 2u);
    EXPECT_EQ(big.peak_active_bytes, 32u << 20);  // seq 4's; never seq 1's 16 MiB with another
    // 8 MiB: the 16 MiB size refusal is passed over; the out-of-memory fits; seq 4 does not.
    const replay_report small = replay_at(8 << 20);
    ASSERT_FALSE(small.ok());
    EXPECT_EQ(small.oom->seq, 4u);
    EXPECT_TRUE(small.oom->recorded_failure);
    EXPECT_EQ(small.recorded_size_refusals, 1u);
    EXPECT_EQ(small.recorded_failures_that_fit, 1u);
  }
}

// At the end of a trace, and in a trace shorter than the lookahead, the comment is still read
// before its event is applied.
TEST(Replay, ASizeRefusalAtTheEndOrAlone) {
  const std::string refusal =
      "0 0 0 0 alloc_failed 1 16777216 buffer 0\n# failure: seq 0 status -61\n";
  for (const std::string& text :
       {"clpool-trace 1\n" + refusal,
        "clpool-trace 1\n0 0 0 0 alloc_failed 9 1 buffer 0\n" +
            std::string(
                "1 0 0 0 alloc_failed 1 16777216 buffer 0\n# failure: seq 1 status -61\n")}) {
    SCOPED_TRACE(text);
    trace::trace_reader reader = trace::trace_reader::from_string(text);
    const replay_report r =
        replay_stream(reader, pool_lb(4), {1 << 20, alloc_semantics::immediate});
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.recorded_size_refusals, 1u);
  }
}

// The first failure comment after an event is its; a later one is not, whatever it says.
TEST(Replay, OnlyTheFirstFailureCommentIsTheEvents) {
  trace::trace_reader reader = trace::trace_reader::from_string(
      "clpool-trace 1\n0 0 0 0 alloc_failed 1 16777216 buffer 0\n# failure: seq 0 status -4\n"
      "# note: between\n# failure: seq 0 status -61\n");
  const replay_report r = replay_stream(reader, pool_lb(4), {1 << 20, alloc_semantics::immediate});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.oom->recorded_failure);
  EXPECT_EQ(r.recorded_size_refusals, 0u);
}

TEST(Replay, ApplySizeRefusalTakesAnAllocFailedOnly) {
  replayer r(pool_lb(4), device_spec{});
  trace_event e;
  e.action = trace_action::alloc;
  EXPECT_THROW(r.apply_size_refusal(e), std::invalid_argument);
  e.action = trace_action::alloc_failed;
  e.size = 1;
  EXPECT_TRUE(r.apply_size_refusal(e));
  EXPECT_EQ(r.report().recorded_size_refusals, 1u);
  EXPECT_EQ(r.report().events, 1u);
}

TEST(Replay, SubBuffersTakeNoDeviceMemory) {
  events_builder b;
  b.alloc(1, 80).add(trace_action::alloc, 2, 80, trace_kind::sub).free(2).free(1);
  const replay_report r = replay_events(b.events, pool_lb(12), {100, alloc_semantics::immediate});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.peak_device_bytes, 80u);
}

TEST(Replay, FreeHeldAndStopHolding) {
  events_builder b;
  b.alloc(1, 60)
      .free(1)
      .add(trace_action::free_held, 0, 0)
      .alloc(2, 70)
      .add(trace_action::stop_holding, 0, 0)
      .free(2);
  const replay_report r = replay_events(b.events, pool_lb(12), {100, alloc_semantics::deferred});
  EXPECT_TRUE(r.ok()) << "free_held returned the 60 bytes before the 70 were committed";
  EXPECT_EQ(r.free_held_calls, 1u);
  EXPECT_EQ(r.stop_holding_calls, 1u);
  EXPECT_EQ(r.allocator_frees, 2u);
}

TEST(Replay, AUseNamesALiveBlockWhateverTheDevice) {
  replay_config nopool;
  nopool.use_pool = false;
  events_builder never;
  never.alloc(1, 10).use(99, 10);
  for (const alloc_semantics sem : {alloc_semantics::deferred, alloc_semantics::immediate}) {
    for (const char* kinds : {"buffer", ""}) {
      EXPECT_THROW(replay_with_uses(never.events, nopool, {100, sem}, kinds), replay_input_error)
          << kinds;
      EXPECT_THROW(replay_with_uses(never.events, pool_lb(4), {100, sem}, kinds),
                   replay_input_error)
          << kinds;
    }
  }
  // A sub-buffer the program kept uses its released parent; freed at its release (the default
  // moment on nvidia), the parent takes the use as nothing.
  events_builder kept;
  kept.alloc(1, 60).use(1, 60).release(1).use(1, 60).free(1);
  for (const replay_config& c : {nopool, pool_lb(4)}) {
    EXPECT_TRUE(replay_with_uses(kept.events, c, {100, alloc_semantics::deferred}, "buffer").ok());
  }
  // The block's own kind decides, not the event's: a buffer's use said to be an SVM block's.
  events_builder said;
  said.alloc(1, 60).use(1, 60).alloc(2, 60).add(trace_action::use, 2, 1, trace_kind::svm);
  const replay_report r =
      replay_with_uses(said.events, nopool, {100, alloc_semantics::deferred}, "buffer");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->action, trace_action::use);
  EXPECT_EQ(r.oom->requested_bytes, 60u) << "the block's size, not the event's";
}

TEST(Replay, BadInputIsAnError) {
  events_builder b;
  b.free(5);
  EXPECT_THROW(replay_events(b.events, pool_lb(4), device_spec{}), replay_input_error);
  events_builder c;
  c.alloc(5, 1).alloc(5, 1);
  EXPECT_THROW(replay_events(c.events, replay_config{.use_pool = false}, device_spec{}),
               replay_input_error);
}

TEST(Replay, StreamErrorsNameFileAndLine) {
  trace::trace_reader reader = trace::trace_reader::from_string(
      "clpool-trace 1\n0 0 0 0 alloc 1 10 buffer 0\n\n1 0 0 0 free 2 10 buffer 0\n", "x.trace",
      {.check_liveness = false});
  try {
    replay_stream(reader, pool_lb(4), device_spec{});
    FAIL() << "expected trace_error";
  } catch (const trace::trace_error& e) {
    EXPECT_EQ(e.line(), 4u);
    EXPECT_EQ(std::string(e.what()).rfind("x.trace:4: free of id 2", 0), 0u) << e.what();
    EXPECT_EQ(e.events_read(), 1u);
  }
}

// What the report says of the trace is of the whole trace, past an out-of-memory: its use events,
// the sizes the pool warning judges, and whether it ended without its recorder's normal end
// (a zero-filled tail) with blocks live.
TEST(Replay, AStreamCountsTheWholeTracePastTheFailure) {
  std::string text = "clpool-trace 4\n# first_uses: buffer\n";
  std::uint64_t seq = 0;
  const auto line = [&](const char* action, std::uint64_t id, std::uint64_t size) {
    text += std::to_string(seq++) + " 0 0 0 " + action + " " + std::to_string(id) + " " +
            std::to_string(size) + " buffer 0\n";
  };
  line("alloc", 1, 1114111);  // a pool bin's size
  line("use", 1, 1114111);
  line("alloc", 2, 3 << 20);
  line("use", 2, 3 << 20);  // does not fit 4 MiB: the failure
  for (std::uint64_t id = 3; id < 23; ++id) {
    line("alloc", id, 1114111);
    line("use", id, 1114111);
  }
  line("free", 1, 0);
  for (const bool tail : {false, true}) {
    trace::trace_reader reader = trace::trace_reader::from_string(
        text + std::string(tail ? 100 : 0, '\0'), "t.trace", {.check_liveness = false});
    const replay_report r = replay_stream(reader, replay_config{.use_pool = false},
                                          device_spec{4 << 20, alloc_semantics::deferred});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.oom->event_index, 3u);
    EXPECT_EQ(r.uses, 2u) << "applied";
    ASSERT_TRUE(r.trace_counts_known);
    EXPECT_EQ(r.in_trace.uses, 22u) << "the trace's";
    EXPECT_EQ(r.in_trace.sized_allocs, 22u);
    EXPECT_EQ(r.in_trace.bin_sized_allocs, 21u);
    EXPECT_TRUE(r.looks_recorded_below_a_pool()) << "judged on the whole trace, not 2 allocs";
    EXPECT_EQ(r.in_trace.live_at_end(), 21u);
    EXPECT_EQ(r.in_trace.cut_off, tail);
    EXPECT_EQ(r.ends_cut_off_with_live_blocks(), tail);
  }
}

TEST(Replay, StreamLookaheadKeepsPlainLoopOrder) {
  // An out-of-memory before a malformed line: the replay stops at the OOM, as a plain loop would.
  {
    trace::trace_reader reader = trace::trace_reader::from_string(
        "clpool-trace 1\n0 0 0 0 alloc 1 80 buffer 0\n1 0 0 0 alloc 2 80 buffer 0\n"
        "2 0 0 0 alloc 3 1 buffer 0\ngarbage\n",
        "x.trace", {.check_liveness = false});
    const replay_report r = replay_stream(reader, pool_lb(12), {100, alloc_semantics::immediate});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.oom->event_index, 1u);
    EXPECT_EQ(r.oom->line, 3u);
  }
  // A malformed line after valid events: every earlier event is applied, then the error.
  {
    trace::trace_reader reader = trace::trace_reader::from_string(
        "clpool-trace 1\n0 0 0 0 alloc 1 10 buffer 0\n1 0 0 0 free 1 10 buffer 0\n"
        "2 0 0 0 alloc 3 1 buffer 0\ngarbage\n",
        "x.trace", {.check_liveness = false});
    try {
      replay_stream(reader, pool_lb(12), device_spec{});
      FAIL() << "expected trace_error";
    } catch (const trace::trace_error& e) {
      EXPECT_EQ(e.line(), 5u) << e.what();
      EXPECT_EQ(e.events_read(), 3u);
    }
  }
}

// A random workload: allocations of mixed sizes, frees of random live ids, occasional free_held.
std::vector<trace_event> random_workload(unsigned seed, int n) {
  std::mt19937_64 rng(seed);
  events_builder b;
  std::vector<std::uint64_t> live;
  std::uint64_t next_id = 1;
  for (int i = 0; i < n; ++i) {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    if (r < 55 || live.empty()) {
      const std::uint64_t size = rng() % 3 == 0 ? rng() % (1 << 22) : rng() % 4096 + 1;
      b.alloc(next_id, size);
      live.push_back(next_id++);
    } else if (r < 98) {
      const std::size_t k = rng() % live.size();
      b.free(live[k]);
      live[k] = live.back();
      live.pop_back();
    } else {
      b.add(trace_action::free_held, 0, 0);
    }
  }
  return b.events;
}

// Runs the same operations directly on memory_pool<fake_allocator> over a fake_device of the given
// capacity and returns the index of the first out-of-memory, its report and the statistics then.
struct direct_result {
  std::optional<std::uint64_t> oom_index;
  oom_report report;
  pool_statistics stats;
};

direct_result run_directly(const std::vector<trace_event>& events, unsigned lb,
                           std::uint64_t capacity) {
  testing::fake_allocator alloc;
  alloc.device->set_capacity(capacity);
  memory_pool<testing::fake_allocator> pool(alloc, pool_options{lb, unlimited, {}});
  std::unordered_map<std::uint64_t, memory_pool<testing::fake_allocator>::allocation> live;
  direct_result out;
  for (std::uint64_t i = 0; i < events.size(); ++i) {
    const trace_event& e = events[i];
    try {
      if (e.action == trace_action::alloc) {
        live.emplace(e.id, pool.allocate(e.size));
      } else if (e.action == trace_action::free) {
        live.erase(e.id);
      } else if (e.action == trace_action::free_held) {
        pool.free_held();
      }
    } catch (const out_of_memory& x) {
      out.oom_index = i;
      out.report = x.report();
      break;
    }
  }
  out.stats = pool.statistics();
  return out;
}

TEST(Replay, OomPointMatchesThePoolRunDirectly) {
  int ooms = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto events = random_workload(seed, 3000);
    for (unsigned lb : {0u, 2u, 4u}) {
      const std::uint64_t capacity = (8ull << 20) + seed * 12345;
      const direct_result d = run_directly(events, lb, capacity);
      const replay_report r =
          replay_events(events, pool_lb(lb), {capacity, alloc_semantics::immediate});
      ASSERT_EQ(d.oom_index.has_value(), r.oom.has_value()) << "seed " << seed << " lb " << lb;
      EXPECT_EQ(d.stats.hits, r.hits);
      EXPECT_EQ(d.stats.misses, r.misses);
      EXPECT_EQ(d.stats.allocator_allocations, r.allocator_allocations);
      EXPECT_EQ(d.stats.allocator_frees, r.allocator_frees);
      EXPECT_EQ(d.stats.oom_retries, r.oom_retries);
      EXPECT_EQ(d.stats.peak_active_bytes, r.peak_active_bytes);
      if (!d.oom_index) continue;
      ++ooms;
      EXPECT_EQ(*d.oom_index, r.oom->event_index) << "seed " << seed << " lb " << lb;
      EXPECT_EQ(d.report.requested_bytes, r.oom->requested_bytes);
      EXPECT_EQ(d.report.rounded_bytes, r.oom->rounded_bytes);
      EXPECT_EQ(d.report.active_bytes, r.oom->active_bytes);
      EXPECT_EQ(d.report.active_rounded_bytes, r.oom->active_rounded_bytes);
      EXPECT_EQ(d.report.held_bytes, r.oom->held_bytes);
      EXPECT_EQ(d.report.managed_bytes, r.oom->managed_bytes);
    }
  }
  EXPECT_GT(ooms, 10) << "the workload should run out of memory often enough to test something";
}

bool same(const replay_report& a, const replay_report& b) {
  const auto key = [](const replay_report& r) {
    return std::make_tuple(r.events, r.allocs, r.frees, r.peak_active_bytes, r.peak_managed_bytes,
                           r.peak_device_bytes, r.hits, r.misses, r.allocator_allocations,
                           r.allocator_frees, r.allocator_failures, r.oom_retries,
                           r.rescued_requests, r.oom.has_value());
  };
  if (key(a) != key(b) || a.timeline.size() != b.timeline.size()) return false;
  for (std::size_t i = 0; i < a.timeline.size(); ++i) {
    const auto& p = a.timeline[i];
    const auto& q = b.timeline[i];
    if (p.event != q.event || p.active_bytes != q.active_bytes || p.held_bytes != q.held_bytes ||
        p.managed_bytes != q.managed_bytes || p.device_used_bytes != q.device_used_bytes) {
      return false;
    }
  }
  if (a.oom) {
    return a.oom->event_index == b.oom->event_index && a.oom->message == b.oom->message &&
           a.oom->managed_bytes == b.oom->managed_bytes &&
           a.oom->held_before_bytes == b.oom->held_before_bytes;
  }
  return true;
}

TEST(Replay, Deterministic) {
  const auto events = random_workload(7, 20000);
  for (const char* sem : {"immediate", "deferred"}) {
    const device_spec dev{6ull << 20, *parse_semantics(sem)};
    const replay_report a = replay_events(events, pool_lb(4), dev, {.timeline = true});
    const replay_report b = replay_events(events, pool_lb(4), dev, {.timeline = true});
    EXPECT_TRUE(same(a, b)) << sem;
  }
}

TEST(Replay, TimelineIsBoundedAndKeepsThePeak) {
  const auto events = random_workload(3, 50000);
  const replay_report r = replay_events(events, pool_lb(4), device_spec{},
                                        {.timeline = true, .max_timeline_points = 64});
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r.timeline.size(), 65u);
  EXPECT_GE(r.timeline.size(), 16u);
  std::uint64_t peak = 0;
  for (const auto& p : r.timeline) peak = std::max(peak, p.managed_bytes);
  EXPECT_EQ(peak, r.peak_managed_bytes);
}

// The tail keeps the last events one point each, ending at the failing event, with the same
// figures a full-resolution timeline has for them.
TEST(Replay, TimelineTailIsTheLastEventsAtFullResolution) {
  const auto events = random_workload(5, 5000);
  const replay_config nopool = parse_config("nopool");  // a pool's retry could rescue the peak
  // One byte short of the unbounded peak: it fails, late in the trace.
  const device_spec dev{replay_events(events, nopool, device_spec{}).peak_device_bytes - 1,
                        alloc_semantics::immediate};
  const replay_report r =
      replay_events(events, nopool, dev,
                    {.timeline = true, .max_timeline_points = 64, .timeline_tail_events = 48});
  ASSERT_FALSE(r.ok());
  ASSERT_GT(r.events, 48u * 2);
  const replay_report full =
      replay_events(events, nopool, dev, {.timeline = true, .max_timeline_points = 1 << 20});
  ASSERT_EQ(full.timeline.size(), r.events);
  ASSERT_EQ(r.timeline_tail.size(), 48u);
  EXPECT_EQ(r.timeline_tail.back().event, r.oom->event_index);
  for (std::size_t i = 0; i < r.timeline_tail.size(); ++i) {
    const timeline_point& p = r.timeline_tail[i];
    const timeline_point& q = full.timeline[r.events - 48 + i];
    EXPECT_EQ(p.event, q.event);
    EXPECT_EQ(p.active_bytes, q.active_bytes);
    EXPECT_EQ(p.held_bytes, q.held_bytes);
    EXPECT_EQ(p.managed_bytes, q.managed_bytes);
    EXPECT_EQ(p.device_used_bytes, q.device_used_bytes);
  }
  // A replay shorter than the tail keeps every event.
  const std::vector<trace_event> few(events.begin(), events.begin() + 10);
  EXPECT_EQ(replay_events(few, pool_lb(4), device_spec{}, {.timeline = true}).timeline_tail.size(),
            10u);
}

// `host` blocks (ALLOC_HOST_PTR) go to the host budget, never to the device or the pool.
TEST(Replay, HostBlocksChargeTheHostBudgetNotTheDevice) {
  for (const replay_config& c : {pool_lb(12), parse_config("nopool")}) {
    events_builder b;
    b.add(trace_action::alloc, 1, 3000, trace_kind::host)
        .alloc(2, 1024)
        .free(1)
        .add(trace_action::alloc, 3, 2000, trace_kind::host)
        .free(3)
        .free(2);
    const replay_report r = replay_events(b.events, c, {1024, alloc_semantics::immediate});
    EXPECT_TRUE(r.ok()) << to_string(c);
    EXPECT_EQ(r.peak_device_bytes, 1024u);
    EXPECT_EQ(r.peak_host_bytes, 3000u);
    EXPECT_EQ(r.host_allocs, 2u);
    EXPECT_EQ(r.allocator_allocations, 1u);
  }
}

TEST(Replay, HostBudgetOutOfMemory) {
  for (const replay_config& c : {pool_lb(12), parse_config("nopool")}) {
    events_builder b;
    b.add(trace_action::alloc, 1, 3000, trace_kind::host)
        .alloc(2, 1024)
        .add(trace_action::alloc, 3, 2000, trace_kind::host);
    device_spec d{1 << 20, alloc_semantics::immediate};
    d.host_capacity = 4000;
    const replay_report r = replay_events(b.events, c, d);
    ASSERT_TRUE(r.oom.has_value()) << to_string(c);
    EXPECT_EQ(r.oom->site, oom_site::host);
    EXPECT_EQ(r.oom->event_index, 2u);
    EXPECT_EQ(r.oom->active_bytes, 1024u);
    EXPECT_NE(r.oom->message.find("3000 of 4000"), std::string::npos) << r.oom->message;
  }
}

// Version 3: a block the program released is free at its release, at the next wait, or at the
// driver's free, as the rule says (free_schedule.h); the default is the profile's.
TEST(ReplayFreesAt, EachRulePlacesTheFree) {
  // Three blocks of 1 MiB: the program releases each before the next (no wait in between), waits
  // after the third, and the recording driver freed all three at the end.
  events_builder b;
  b.alloc(1, 1 << 20).release(1).alloc(2, 1 << 20).release(2).alloc(3, 1 << 20).wait().release(3);
  b.alloc(4, 1 << 20).free(1).free(2).free(3).free(4);
  const replay_config nopool{.use_pool = false};
  const auto peak = [&](std::optional<free_moment> m,
                        const device_model::device_profile& profile = {}) {
    replay_options o;
    o.frees_at = m;
    const replay_report r = replay_events(b.events, nopool, device_spec{.profile = profile}, o);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.releases, 3u);
    EXPECT_EQ(r.waits, 1u);
    EXPECT_EQ(r.frees, 4u);
    EXPECT_EQ(r.frees_at_given, m.has_value());
    return r.peak_active_bytes >> 20;
  };
  EXPECT_EQ(peak(free_moment::release), 1u);  // each block gone before the next
  EXPECT_EQ(peak(free_moment::wait), 3u);     // 1 and 2 go at the wait, after 3 arrived
  EXPECT_EQ(peak(free_moment::driver), 4u);   // all four live at the end
  // The default: the profile's commands_finish (exact and nvidia promptly, pocl at the wait).
  EXPECT_EQ(peak(std::nullopt), 1u);
  device_model::device_profile at_wait;
  at_wait.commands_finish = device_model::command_completion::at_wait;
  EXPECT_EQ(peak(std::nullopt, at_wait), 3u);
  EXPECT_EQ(replay_events(b.events, nopool, device_spec{.profile = at_wait}).frees_at,
            free_moment::wait);
  // Through the pool the same: with the release rule each block is a hit on the last one.
  replay_options o;
  o.frees_at = free_moment::release;
  const replay_report pooled = replay_events(b.events, pool_lb(4), device_spec{}, o);
  EXPECT_EQ(pooled.misses, 1u);
  EXPECT_EQ(pooled.hits, 3u);
}

// A free that comes before the next wait frees the block then (rule wait); a second release,
// a release of a block that is not live and an alloc of a block freed early but not yet `free`d
// are input errors.
TEST(ReplayFreesAt, DriverFreeBeforeTheWaitAndBadInput) {
  events_builder b;
  b.alloc(1, 100).release(1).free(1).alloc(2, 100).wait().free(2);
  replay_options o;
  o.frees_at = free_moment::wait;
  const replay_report r =
      replay_events(b.events, replay_config{.use_pool = false}, device_spec{}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.peak_active_bytes, 100u);
  for (const free_moment m : {free_moment::release, free_moment::wait, free_moment::driver}) {
    o.frees_at = m;
    for (const bool pool : {false, true}) {
      const replay_config c{.use_pool = pool};
      events_builder twice;
      twice.alloc(1, 10).release(1).release(1);
      EXPECT_THROW(replay_events(twice.events, c, device_spec{}, o), replay_input_error)
          << to_string(m);
      events_builder unknown;
      unknown.release(7);
      EXPECT_THROW(replay_events(unknown.events, c, device_spec{}, o), replay_input_error);
    }
  }
  o.frees_at = free_moment::release;
  events_builder early;
  early.alloc(1, 10).release(1).alloc(1, 10);
  EXPECT_THROW(replay_events(early.events, replay_config{}, device_spec{}, o), replay_input_error);
  try {
    replay_events(early.events, replay_config{}, device_spec{}, o);
  } catch (const replay_input_error& e) {
    EXPECT_STREQ(e.what(),
                 "alloc of id 1, which is already live (allocated earlier and not freed)");
  }
}

}  // namespace
}  // namespace clpool::replay

namespace clpool::replay {
namespace {

// The peak's event, the end's live blocks, and a replay stopped at the peak: what the pytest
// plugin reports per test and clpool_replay --peak prints, from the one engine.
TEST(ReplayPeakAndEnd, NoPool) {
  events_builder b;
  b.alloc(1, 100)
      .alloc(2, 300)
      .free(1)
      .alloc(3, 50)
      .alloc(4, 7)
      .add(trace_action::alloc, 5, 999, trace_kind::host)
      .add(trace_action::alloc, 6, 10, trace_kind::sub)
      .free(2);
  replay_config nopool;
  nopool.use_pool = false;
  const replay_report r = replay_events(b.events, nopool, {1 << 20, alloc_semantics::immediate});
  EXPECT_EQ(r.peak_active_bytes, 400u);
  EXPECT_EQ(r.peak_active_event, 1u);  // the second alloc; later ones never reach 400 again
  EXPECT_EQ(r.end_active_bytes, 57u);  // 3 and 4: host and sub blocks take no device memory
  EXPECT_EQ(r.end_active_blocks, 2u);
  EXPECT_FALSE(r.stopped);

  replay_options at_peak;
  at_peak.stop_after_event = r.peak_active_event;
  const replay_report p =
      replay_events(b.events, nopool, {1 << 20, alloc_semantics::immediate}, at_peak);
  EXPECT_TRUE(p.stopped);
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p.events, 2u);
  EXPECT_EQ(p.end_active_bytes, 400u);
  EXPECT_EQ(p.end_active_blocks, 2u);
}

TEST(ReplayPeakAndEnd, WithAPoolAndSites) {
  events_builder b;
  b.alloc(1, 1000).alloc(2, 2000).free(1).alloc(3, 1000);
  b.events[0].stack = 7;
  b.events[1].stack = 8;
  b.events[3].stack = 7;
  replay_options o;
  o.sites = true;
  const replay_report r =
      replay_events(b.events, pool_lb(12), {1 << 20, alloc_semantics::immediate}, o);
  EXPECT_EQ(r.peak_active_bytes, 3000u);
  EXPECT_EQ(r.peak_active_event, 1u);
  EXPECT_EQ(r.end_active_bytes, 3000u);
  EXPECT_EQ(r.end_active_blocks, 2u);
  ASSERT_EQ(r.end_live_sites.size(), 2u);
  EXPECT_EQ(r.end_live_sites[0].stack, 8u);
  EXPECT_EQ(r.end_live_sites[0].requested_bytes, 2000u);
  EXPECT_EQ(r.end_live_sites[1].stack, 7u);
  EXPECT_EQ(r.end_live_sites[1].requested_bytes, 1000u);
}

TEST(ReplayPeakAndEnd, ReleasesFreeAtTheRule) {
  // Version 3: under `release` a released block is not live at the end; under `driver` it is
  // until its free.
  events_builder b;
  b.alloc(1, 100).alloc(2, 200).release(2).alloc(3, 400);
  replay_config nopool;
  nopool.use_pool = false;
  replay_options at_release;
  at_release.frees_at = free_moment::release;
  const replay_report r =
      replay_events(b.events, nopool, {1 << 20, alloc_semantics::immediate}, at_release);
  EXPECT_EQ(r.peak_active_bytes, 500u);
  EXPECT_EQ(r.peak_active_event, 3u);
  EXPECT_EQ(r.end_active_bytes, 500u);
  replay_options at_driver;
  at_driver.frees_at = free_moment::driver;
  const replay_report d =
      replay_events(b.events, nopool, {1 << 20, alloc_semantics::immediate}, at_driver);
  EXPECT_EQ(d.peak_active_bytes, 700u);
  EXPECT_EQ(d.end_active_bytes, 700u);
  EXPECT_EQ(d.end_active_blocks, 3u);
}

}  // namespace
}  // namespace clpool::replay
