// A replay on --device mockcl reaches its first out-of-memory at the same event, with the same
// active / held / managed bytes, as the same operations run directly on clpool::opencl::buffer_pool
// over a mock device of the same capacity and semantics; the simulated device agrees with mockcl
// (immediate semantics); two mockcl replays give identical reports.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "device_model/profile.h"
#include "mockcl/testing.h"
#include "pool/errors.h"
#include "pool/opencl/buffer_pool.h"
#include "pool/opencl/cl_object.h"
#include "replay/min_capacity.h"
#include "replay/replay.h"
#include "tools/replay/mockcl_device.h"
#include "trace/trace_reader.h"

namespace clpool::replay_cli {

using replay::alloc_semantics;
using replay::device_spec;
using replay::find_min_capacity;
using replay::min_capacity_result;
using replay::oom_site;
using replay::parse_config;
using replay::replay_config;
using replay::replay_device;
using replay::replay_events;
using replay::replay_report;
using replay::simulated_device;
using replay::to_string;

namespace {

using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

mockcl_backend& backend() { return mockcl_backend::open(mockcl::testing::mock_so_path()); }

// A mock device with `profile_ref` loaded here, once, as clpool_replay's command line does.
std::unique_ptr<replay_device> mock_device(std::uint64_t capacity, alloc_semantics semantics,
                                           const std::string& profile_ref = "exact") {
  return backend().open_device({.capacity = capacity,
                                .semantics = semantics,
                                .profile = device_model::load_profile(profile_ref)},
                               profile_ref);
}

// A simulated device as `spec` says, for the same replay on both.
std::unique_ptr<replay_device> sim_device(const device_spec& spec) {
  return std::make_unique<simulated_device>(spec);
}

// What the direct run saw at its first out-of-memory.
struct direct_oom {
  std::uint64_t event_index = 0;
  std::uint64_t active = 0, held = 0, managed = 0;
  bool at_first_use = false;
};

// Runs `events` directly on buffer_pool<A> over one mock device (capacity, semantics), the way an
// application would: allocate, and with deferred semantics migrate the buffer once (first use).
template <class A, class MakeAllocator>
std::optional<direct_oom> run_direct(const std::vector<trace_event>& events, std::uint64_t capacity,
                                     alloc_semantics semantics, MakeAllocator make) {
  mockcl::controller& ctl = backend().control();
  ctl.reset();
  const std::string err = ctl.configure_devices("gpu:capacity=" + std::to_string(capacity) +
                                                ",reported=4611686018427387904,max_alloc="
                                                "4611686018427387904,semantics=" +
                                                std::string(to_string(semantics)));
  EXPECT_EQ(err, "");
  cl_platform_id platform = mockcl::testing::loader_mock_platform();
  cl_device_id device = nullptr;
  EXPECT_EQ(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), CL_SUCCESS);
  cl_int s = CL_SUCCESS;
  auto context =
      opencl::context_ref::adopt(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &s));
  auto queue = opencl::queue_ref::adopt(
      clCreateCommandQueueWithProperties(context.get(), device, nullptr, &s));
  std::optional<direct_oom> result;
  {
    opencl::buffer_pool<A> pool(make(context.get(), queue.get()));
    std::map<std::uint64_t, opencl::pooled_buffer<A>> live;
    std::set<cl_mem> used;
    for (std::size_t i = 0; i < events.size() && !result; ++i) {
      const trace_event& e = events[i];
      const auto oom = [&](bool first_use) {
        result =
            direct_oom{i, pool.active_bytes(), pool.held_bytes(), pool.managed_bytes(), first_use};
      };
      switch (e.action) {
        case trace_action::alloc:
        case trace_action::alloc_failed: {
          if (e.kind == trace_kind::sub) {
            live[e.id];
            break;
          }
          opencl::pooled_buffer<A> b;
          try {
            b = pool.allocate(e.size);
          } catch (const out_of_memory&) {
            oom(false);
            break;
          }
          cl_mem m = b.mem();
          if (semantics == alloc_semantics::deferred && used.insert(m).second) {
            const cl_int st = clEnqueueMigrateMemObjects(
                queue.get(), 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, nullptr, nullptr);
            if (st == CL_MEM_OBJECT_ALLOCATION_FAILURE) {
              // As the replay reports it: figures without the failing request.
              used.erase(m);
              oom(true);
              result->active -= b.size();
              result->managed -= b.rounded_size();
              break;
            }
          }
          if (e.action == trace_action::alloc) live[e.id] = std::move(b);
          break;
        }
        case trace_action::free:
          live.erase(e.id);
          break;
        case trace_action::free_held:
          pool.free_held();
          break;
        case trace_action::stop_holding:
          pool.stop_holding();
          break;
        case trace_action::release:
        case trace_action::wait:
        case trace_action::use:
          // Version 3's two moments of a free and version 4's first uses are the replay's to
          // model, not this direct run's.
          ADD_FAILURE() << "run_direct plays version-1 and 2 traces only; event " << i << " is a "
                        << to_string(e.action);
          break;
      }
    }
  }
  return result;
}

std::optional<direct_oom> run_direct(const std::vector<trace_event>& events, std::uint64_t capacity,
                                     alloc_semantics semantics) {
  if (semantics == alloc_semantics::immediate) {
    return run_direct<opencl::immediate_buffer_allocator>(
        events, capacity, semantics, [](cl_context, cl_command_queue q) {
          return opencl::immediate_buffer_allocator(q, {.method = opencl::force_method::migrate});
        });
  }
  return run_direct<opencl::deferred_buffer_allocator>(
      events, capacity, semantics,
      [](cl_context c, cl_command_queue) { return opencl::deferred_buffer_allocator(c); });
}

std::vector<trace_event> shipped_trace() {
  trace::read_result r = trace::read_all("tools/replay/examples/pyopencl_pocl.trace");
  EXPECT_FALSE(r.error.has_value());
  return r.events;
}

// Allocations that grow and shrink, with frees that leave held blocks of other sizes behind.
std::vector<trace_event> synthetic_trace() {
  std::vector<trace_event> out;
  std::uint64_t seq = 0, id = 0;
  std::vector<std::uint64_t> live;
  for (int round = 0; round < 40; ++round) {
    const std::uint64_t size = (std::uint64_t{1} << 20) * (1 + round % 7) + 4096 * round;
    out.push_back({.seq = seq++, .action = trace_action::alloc, .id = ++id, .size = size});
    live.push_back(id);
    if (round % 3 == 2) {
      out.push_back({.seq = seq++, .action = trace_action::free, .id = live.front()});
      live.erase(live.begin());
    }
  }
  return out;
}

void expect_same_oom(const std::vector<trace_event>& events, std::uint64_t capacity,
                     alloc_semantics semantics) {
  SCOPED_TRACE(std::string(to_string(semantics)) + " capacity " + std::to_string(capacity));
  const replay_report r = replay_events(events, replay_config{}, mock_device(capacity, semantics));
  const std::optional<direct_oom> d = run_direct(events, capacity, semantics);
  ASSERT_TRUE(r.oom.has_value()) << "choose a capacity that runs out";
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(r.oom->event_index, d->event_index);
  EXPECT_EQ(r.oom->site == oom_site::first_use, d->at_first_use);
  EXPECT_EQ(r.oom->active_bytes, d->active);
  EXPECT_EQ(r.oom->held_bytes, d->held);
  EXPECT_EQ(r.oom->managed_bytes, d->managed);
  EXPECT_EQ(r.device.backend, "mockcl");
}

// A capacity at which `events` runs out on the simulated device with the default pool and
// immediate semantics: 3/4 of the unbounded peak, lowered by quarters until it fails.
std::uint64_t tight_capacity(const std::vector<trace_event>& events) {
  std::uint64_t cap = replay_events(events, replay_config{}, device_spec{}).peak_device_bytes;
  do {
    cap = cap * 3 / 4;
  } while (replay_events(events, replay_config{}, device_spec{cap}).ok());
  return cap;
}

TEST(MockclReplay, ShippedTraceMatchesDirectPoolImmediate) {
  const auto events = shipped_trace();
  expect_same_oom(events, tight_capacity(events), alloc_semantics::immediate);
}

TEST(MockclReplay, ShippedTraceMatchesDirectPoolDeferred) {
  const auto events = shipped_trace();
  expect_same_oom(events, tight_capacity(events), alloc_semantics::deferred);
}

TEST(MockclReplay, SyntheticTraceMatchesDirectPool) {
  const auto events = synthetic_trace();
  for (alloc_semantics s : {alloc_semantics::immediate, alloc_semantics::deferred}) {
    expect_same_oom(events, tight_capacity(events), s);
  }
}

TEST(MockclReplay, SimAndMockclAgreeOnImmediateOomPoint) {
  for (const auto& events : {shipped_trace(), synthetic_trace()}) {
    const std::uint64_t cap = tight_capacity(events);
    for (const replay_config& c :
         {replay_config{}, parse_config("nopool"), parse_config("pool:lb=2,trim-ratio=0.25")}) {
      const replay_report sim = replay_events(events, c, device_spec{cap});
      const replay_report mock =
          replay_events(events, c, mock_device(cap, alloc_semantics::immediate));
      ASSERT_TRUE(sim.oom && mock.oom);
      EXPECT_EQ(sim.oom->event_index, mock.oom->event_index);
      EXPECT_EQ(sim.oom->managed_bytes, mock.oom->managed_bytes);
      EXPECT_EQ(sim.peak_device_bytes, mock.peak_device_bytes);
      EXPECT_EQ(sim.allocator_allocations, mock.allocator_allocations);
    }
  }
}

TEST(MockclReplay, HostOomSemanticsMatchesImmediate) {
  const auto events = synthetic_trace();
  const std::uint64_t cap = tight_capacity(events);
  const replay_report sim = replay_events(events, replay_config{}, device_spec{cap});
  const replay_report mock =
      replay_events(events, replay_config{}, mock_device(cap, alloc_semantics::host_oom));
  ASSERT_TRUE(sim.oom && mock.oom);
  EXPECT_EQ(sim.oom->event_index, mock.oom->event_index);
  EXPECT_EQ(sim.oom->managed_bytes, mock.oom->managed_bytes);
  EXPECT_NE(mock.oom->message.find("CL_OUT_OF_HOST_MEMORY"), std::string::npos)
      << mock.oom->message;
}

// --min-capacity on mockcl: each bisection step reconfigures the mock (every object of the
// previous replay released), and the answer is the simulated device's.
TEST(MockclReplay, MinCapacityMatchesSim) {
  const auto events = shipped_trace();
  for (const replay_config& c : {replay_config{}, parse_config("nopool")}) {
    const auto on = [&](bool mock) {
      return find_min_capacity(
          [&](std::uint64_t cap) {
            return replay_events(events, c,
                                 mock ? mock_device(cap, alloc_semantics::deferred)
                                      : sim_device({cap, alloc_semantics::deferred}));
          },
          std::uint64_t{1} << 20);
    };
    const min_capacity_result sim = on(false), mock = on(true);
    ASSERT_TRUE(sim.found && mock.found) << to_string(c);
    EXPECT_EQ(sim.capacity, mock.capacity) << to_string(c);
    ASSERT_TRUE(mock.one_granule_below.has_value());
    EXPECT_FALSE(mock.one_granule_below->ok());
  }
}

// The same with every built-in profile: the mock and the simulated device share the device model,
// so pages, packing and headroom give the same answers, and the same figures at the failure.
TEST(MockclReplay, EveryProfileGivesTheSimulatedDevicesAnswers) {
  const auto events = shipped_trace();
  for (const std::string& profile : device_model::builtin_profile_names()) {
    for (const replay_config& c : {replay_config{}, parse_config("nopool")}) {
      const auto on = [&](bool mock, std::uint64_t cap) {
        std::unique_ptr<replay_device> d =
            mock ? mock_device(cap, alloc_semantics::deferred, profile)
                 : sim_device({.capacity = cap,
                               .semantics = alloc_semantics::deferred,
                               .profile = device_model::load_profile(profile)});
        return replay_events(events, c, std::move(d));
      };
      const min_capacity_result sim = find_min_capacity(
          [&](std::uint64_t cap) { return on(false, cap); }, std::uint64_t{1} << 20);
      const min_capacity_result mock = find_min_capacity(
          [&](std::uint64_t cap) { return on(true, cap); }, std::uint64_t{1} << 20);
      ASSERT_TRUE(sim.found && mock.found) << profile << " " << to_string(c);
      EXPECT_EQ(sim.capacity, mock.capacity) << profile << " " << to_string(c);
      const replay_report a = on(false, sim.capacity - (1 << 20)),
                          b = on(true, sim.capacity - (1 << 20));
      ASSERT_TRUE(a.oom && b.oom) << profile;
      EXPECT_EQ(a.oom->event_index, b.oom->event_index) << profile;
      EXPECT_EQ(a.oom->device_used_bytes, b.oom->device_used_bytes) << profile;
      EXPECT_EQ(a.oom->page_loss_bytes, b.oom->page_loss_bytes) << profile;
      EXPECT_EQ(a.peak_device_bytes, b.peak_device_bytes) << profile;
    }
  }
}

// The largest size a trace may name (2^62) is an out-of-memory on every device, profile and
// configuration, never a CL_INVALID_BUFFER_SIZE because the pool's bin rounded it above a limit.
TEST(MockclReplay, TheLargestTraceSizeIsAnOutOfMemoryEverywhere) {
  const std::vector<trace_event> events = {
      {.seq = 0, .action = trace_action::alloc, .id = 1, .size = trace::max_event_size}};
  for (const std::string& profile : device_model::builtin_profile_names()) {
    for (const replay_config& c : {replay_config{}, parse_config("nopool")}) {
      for (alloc_semantics sem :
           {alloc_semantics::immediate, alloc_semantics::deferred, alloc_semantics::host_oom}) {
        for (bool mock : {false, true}) {
          std::unique_ptr<replay_device> d =
              mock ? mock_device(std::uint64_t{1} << 30, sem, profile)
                   : sim_device({.capacity = std::uint64_t{1} << 30,
                                 .semantics = sem,
                                 .profile = device_model::load_profile(profile)});
          const replay_report r = replay_events(events, c, std::move(d));
          ASSERT_TRUE(r.oom.has_value()) << profile << " " << to_string(c) << " mock " << mock;
          EXPECT_EQ(r.oom->event_index, 0u);
          EXPECT_EQ(r.oom->site,
                    sem == alloc_semantics::deferred ? oom_site::first_use : oom_site::allocator);
        }
      }
    }
  }
}

TEST(MockclReplay, Deterministic) {
  const auto events = shipped_trace();
  const std::uint64_t cap = tight_capacity(events);
  const replay_report a =
      replay_events(events, replay_config{}, mock_device(cap, alloc_semantics::deferred));
  const replay_report b =
      replay_events(events, replay_config{}, mock_device(cap, alloc_semantics::deferred));
  ASSERT_TRUE(a.oom && b.oom);
  EXPECT_EQ(a.oom->event_index, b.oom->event_index);
  EXPECT_EQ(a.oom->message, b.oom->message);
  EXPECT_EQ(a.peak_managed_bytes, b.peak_managed_bytes);
  EXPECT_EQ(a.allocator_allocations, b.allocator_allocations);
  EXPECT_EQ(a.hits, b.hits);
}

TEST(MockclReplay, NoObjectsLeftBetweenReplays) {
  const auto events = synthetic_trace();
  replay_events(events, parse_config("nopool"),
                mock_device(tight_capacity(events), alloc_semantics::immediate));
  // Reconfiguring is refused while any object lives: it must succeed now.
  for (const auto& [type, n] : backend().control().snapshot().live) EXPECT_EQ(n, 0u) << type;
  EXPECT_EQ(backend().control().configure_devices("gpu"), "");
}

TEST(MockclReplay, MissingSoIsAClearError) {
  try {
    find_mockcl_so("/nonexistent/libmockcl.so");
    FAIL() << "no throw";
  } catch (const mockcl_unavailable& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libmockcl.so"), std::string::npos);
  }
}

}  // namespace
}  // namespace clpool::replay_cli
