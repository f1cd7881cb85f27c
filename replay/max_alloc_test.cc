// The replayed device's CL_DEVICE_MAX_MEM_ALLOC_SIZE (device_spec::max_alloc): where the profile
// enforces it, a request above it is refused for its size (oom_site::max_alloc), which no
// capacity changes; on any profile the pool makes no block above it, as it does over an OpenCL
// allocator (pool/allocator.h largest_block()).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "device_model/profile.h"
#include "pool/bins.h"
#include "replay/min_capacity.h"
#include "replay/replay.h"

namespace clpool::replay {
namespace {

using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

trace_event event(std::uint64_t seq, trace_action action, std::uint64_t id, std::uint64_t size,
                  trace_kind kind = trace_kind::buffer) {
  trace_event e;
  e.seq = seq;
  e.action = action;
  e.id = id;
  e.size = size;
  e.kind = kind;
  return e;
}

replay_config nopool() {
  replay_config c;
  c.use_pool = false;
  return c;
}

device_spec device(const char* profile, std::uint64_t max_alloc) {
  device_spec d;
  d.capacity = 1024 * MiB;
  d.profile = device_model::load_profile(profile);
  d.semantics = device_model::semantics_of(d.profile);
  d.max_alloc = max_alloc;
  return d;
}

TEST(ReplayMaxAlloc, ARequestAboveItIsRefusedForItsSizeWhereTheProfileEnforcesIt) {
  const std::vector<trace_event> events = {event(0, trace_action::alloc, 1, 10 * MiB),
                                           event(1, trace_action::alloc, 2, 100 * MiB + 1)};
  for (const replay_config& c : {replay_config{}, nopool()}) {
    SCOPED_TRACE(to_string(c));
    const replay_report r = replay_events(events, c, device("pocl", 100 * MiB));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.oom->site, oom_site::max_alloc);
    EXPECT_EQ(r.oom->event_index, 1u);
    EXPECT_EQ(r.oom->requested_bytes, 100 * MiB + 1);
    EXPECT_EQ(r.oom->active_bytes, 10 * MiB) << "what was live when it was refused";
    EXPECT_NE(r.oom->message.find("CL_INVALID_BUFFER_SIZE"), std::string::npos) << r.oom->message;
    EXPECT_EQ(r.allocator_failures, 0u) << "refused before the device is asked";
    // At exactly the maximum, nothing is refused.
    EXPECT_TRUE(replay_events(events, c, device("pocl", 100 * MiB + 1)).ok());
    // Not modelled (the default): nothing is refused either.
    EXPECT_TRUE(replay_events(events, c, device("pocl", unlimited)).ok());
  }
}

TEST(ReplayMaxAlloc, EveryKindThatCreatesMemoryIsRefusedButASubBuffer) {
  for (const trace_kind kind : {trace_kind::buffer, trace_kind::svm, trace_kind::host}) {
    SCOPED_TRACE(static_cast<int>(kind));
    const replay_report r = replay_events({event(0, trace_action::alloc, 1, 2 * MiB, kind)},
                                          replay_config{}, device("exact", MiB));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.oom->site, oom_site::max_alloc);
  }
  // A sub-buffer is a view of its parent: no new memory, so no maximum to pass.
  const replay_report sub = replay_events({event(0, trace_action::alloc, 1, MiB),
                                           event(1, trace_action::alloc, 2, MiB, trace_kind::sub)},
                                          replay_config{}, device("exact", MiB));
  EXPECT_TRUE(sub.ok());
}

// An alloc_failed the recorded run saw is replayed as an allocation: above the maximum it is
// this device's size refusal, and the report says the recorded run failed there too.
TEST(ReplayMaxAlloc, ARecordedFailureAboveItIsRefusedAsWell) {
  const replay_report r = replay_events({event(0, trace_action::alloc_failed, 1, 2 * MiB)},
                                        nopool(), device("exact", MiB));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.oom->site, oom_site::max_alloc);
  EXPECT_TRUE(r.oom->recorded_failure);
  EXPECT_EQ(r.recorded_failures, 1u);
}

// NVIDIA reports a maximum it does not enforce: no request is refused, but the pool still makes
// no block above it, as clpool's pool over NVIDIA's driver does.
TEST(ReplayMaxAlloc, WhereItIsNotEnforcedThePoolStillMakesNoBlockAboveIt) {
  const device_model::device_profile nvidia = device_model::load_profile("nvidia");
  ASSERT_FALSE(nvidia.max_alloc_enforced);
  const std::uint64_t request = 100 * MiB;  // its bin (lb=4) is 104 MiB - 1
  ASSERT_GT(rounded_size(request, 4), request);
  const std::vector<trace_event> events = {event(0, trace_action::alloc, 1, request),
                                           event(1, trace_action::free, 1, request),
                                           event(2, trace_action::alloc, 2, 200 * MiB)};
  const replay_report limited = replay_events(events, replay_config{}, device("nvidia", request));
  ASSERT_TRUE(limited.ok()) << "nvidia takes 200 MiB above a 100 MiB maximum";
  EXPECT_EQ(limited.peak_active_bytes, 200 * MiB);
  EXPECT_EQ(limited.allocator_frees, 1u) << "the block of exactly its size is not kept";
  const replay_report unlimited_max =
      replay_events(events, replay_config{}, device("nvidia", unlimited));
  EXPECT_EQ(unlimited_max.allocator_frees, 0u) << "without a maximum the pool keeps its block";
  EXPECT_GT(unlimited_max.peak_managed_bytes, limited.peak_managed_bytes);
}

// A request in the bin that straddles the maximum is served at its own size: it fits a device
// where its rounded bin would not, and the failure's rounded bytes say so.
TEST(ReplayMaxAlloc, TheStraddlingBinIsServedAtItsOwnSize) {
  const std::uint64_t request = 100 * MiB, rounded = rounded_size(request, 4);
  const std::vector<trace_event> events = {event(0, trace_action::alloc, 1, request)};
  device_spec d = device("exact", request);
  d.capacity = request;
  const replay_report exact = replay_events(events, replay_config{}, d);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact.peak_managed_bytes, request);
  d.max_alloc = unlimited;
  const replay_report binned = replay_events(events, replay_config{}, d);
  ASSERT_FALSE(binned.ok());
  EXPECT_EQ(binned.oom->rounded_bytes, rounded);
  d.max_alloc = request;
  d.capacity = request - 1;
  const replay_report short_by_one = replay_events(events, replay_config{}, d);
  ASSERT_FALSE(short_by_one.ok());
  EXPECT_EQ(short_by_one.oom->site, oom_site::allocator);
  EXPECT_EQ(short_by_one.oom->rounded_bytes, request);
}

TEST(ReplayMaxAlloc, NoCapacitySufficesAndTheSearchSaysWhy) {
  const std::vector<trace_event> events = {event(0, trace_action::alloc, 1, 2 * MiB)};
  const min_capacity_result m = find_min_capacity(
      [&](std::uint64_t capacity) {
        device_spec d = device("exact", MiB);
        d.capacity = capacity;
        return replay_events(events, nopool(), d);
      },
      MiB);
  EXPECT_FALSE(m.found);
  EXPECT_NE(m.why_not.find("above the device's maximum allocation (event 0)"), std::string::npos)
      << m.why_not;
  EXPECT_NE(m.why_not.find("no capacity changes"), std::string::npos) << m.why_not;
}

}  // namespace
}  // namespace clpool::replay
