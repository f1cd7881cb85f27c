// Pools over mockcl, a capacity-enforcing mock OpenCL device with a deterministic virtual-time
// scheduler, reached through the real ICD loader. Property tests (rapidcheck):
//   * OOM retry: with an immediate allocator on a device of capacity C, a request whose rounded
//     size fits in C minus the active rounded bytes succeeds, whatever the pool holds;
//   * release ordering: over random interleavings of allocations, uses, rebinds, releases and
//     frees on three queues, no command of a block's new user starts before its previous user's
//     commands end, and the SVM free starts only after every use ends (SVM pool, and buffer pool
//     with cross-queue safety);
//   * no leaks: once pools and allocations are gone, the mock has no outstanding bytes, buffers or
//     SVM blocks;
//   * fault sweep: a failure injected at each CL call position in turn gives success or a typed
//     error, keeps the pool valid, and leaks nothing.
// And deferred-mode tests: the late out-of-memory path and its remedy.
#include <CL/cl.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mockcl/testing.h"
#include "pool/bins.h"
#include "pool/opencl/buffer_pool.h"
#include "pool/opencl/cl_error.h"
#include "pool/opencl/host_pinned_allocator.h"
#include "pool/opencl/svm_pool.h"
#include "pool/opencl/testing/command_order.h"

namespace clpool::opencl {
namespace {

const bool mock_installed = [] {
  mockcl::testing::use_mock_only(mockcl::testing::mock_so_path());
  return true;
}();

mockcl::controller& ctl() {
  static std::unique_ptr<mockcl::controller> c =
      mockcl::testing::icd_control(mockcl::testing::mock_so_path());
  return *c;
}

constexpr std::uint64_t MiB = 1 << 20;

// A fresh mock (reset, one device as `devices` says) with a context and `n` in-order queues.
struct world {
  cl_device_id device = nullptr;
  context_ref context;
  std::vector<queue_ref> queues;

  // `fault`, if not empty, is a mockcl fault rule installed before the first OpenCL call.
  explicit world(const std::string& devices, int n = 1, const std::string& schedule = "eager",
                 const std::string& fault = "") {
    ctl().reset();
    std::string err = ctl().configure_devices(devices);
    if (!err.empty()) throw std::logic_error("configure_devices: " + err);
    err = ctl().configure_schedule(schedule);
    if (!err.empty()) throw std::logic_error("configure_schedule: " + err);
    if (!fault.empty()) {
      err = ctl().configure_faults(fault);
      if (!err.empty()) throw std::logic_error("configure_faults: " + err);
    }
    cl_platform_id p = mockcl::testing::loader_mock_platform();
    if (p == nullptr) throw std::runtime_error("the loader does not list mockcl");
    throw_if_failed(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
    cl_int s = CL_SUCCESS;
    context = context_ref::adopt(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &s));
    throw_if_failed(s, "clCreateContext");
    for (int i = 0; i < n; ++i) {
      queues.push_back(
          queue_ref::adopt(clCreateCommandQueueWithProperties(context.get(), device, nullptr, &s)));
      throw_if_failed(s, "clCreateCommandQueueWithProperties");
    }
  }
  cl_command_queue q(int i) const { return i < 0 ? nullptr : queues[i].get(); }
  void finish() const {
    for (const auto& q : queues) clFinish(q.get());
  }
};

// What a test asserts once every pool and allocation is gone.
struct leak_report {
  std::uint64_t outstanding = 0, pinned = 0, mems = 0, svms = 0;
  std::string describe() const {
    return "outstanding=" + std::to_string(outstanding) + " pinned=" + std::to_string(pinned) +
           " live mem=" + std::to_string(mems) + " live svm=" + std::to_string(svms);
  }
  bool clean() const { return outstanding == 0 && pinned == 0 && mems == 0 && svms == 0; }
};
leak_report leaks() {
  const mockcl::accounting_snapshot s = ctl().snapshot();
  leak_report r;
  for (const auto& d : s.devices) {
    r.outstanding += d.outstanding;
    r.pinned += d.pinned_outstanding;
  }
  auto live = [&](const char* k) {
    auto it = s.live.find(k);
    return it == s.live.end() ? 0 : it->second;
  };
  r.mems = live("mem");
  r.svms = live("svm");
  return r;
}
std::uint64_t live_count(const char* kind) {
  const auto live = ctl().snapshot().live;
  auto it = live.find(kind);
  return it == live.end() ? 0 : it->second;
}
std::uint64_t device_outstanding() { return ctl().snapshot().devices.at(0).outstanding; }

// ---- OOM retry ---------------------------------------------------------------------------------

void check_oom_retry(const std::string& semantics) {
  EXPECT_TRUE(rc::check(
      "OOM retry after free_held (" + semantics + ")",
      [&](const std::vector<std::pair<bool, std::uint32_t>>& ops) {
        constexpr std::uint64_t capacity = 64 * MiB;
        {
          world w("gpu-64m:max_alloc=64m,semantics=" + semantics);
          buffer_pool<> pool{immediate_buffer_allocator(w.q(0))};
          std::vector<pooled_buffer<>> live;
          for (const auto& [is_alloc, arg] : ops) {
            if (is_alloc || live.empty()) {
              const std::uint64_t size = 1 + arg % (24 * MiB);
              const std::uint64_t rounded = rounded_size(size, pool.pool().leading_bits());
              const std::uint64_t active = pool.pool().counters().active_rounded_bytes;
              const bool must_fit = rounded <= capacity - active;
              try {
                live.push_back(pool.allocate(size));
              } catch (const clpool::out_of_memory& e) {
                RC_ASSERT(!must_fit);
                RC_ASSERT(e.report().cause == clpool::oom_cause::allocator);
                RC_ASSERT(is_out_of_memory_status(e.report().allocator_status));
              }
            } else {
              live.erase(live.begin() + arg % live.size());
            }
            RC_ASSERT(pool.pool().state_is_valid());
            // The pool's accounting is exactly what the device has charged.
            RC_ASSERT(device_outstanding() == pool.managed_bytes());
          }
          RC_CLASSIFY(pool.pool().statistics().oom_retries > 0, "freed held memory and retried");
          RC_CLASSIFY(pool.pool().statistics().ooms_raised > 0, "raised out_of_memory");
        }
        const leak_report r = leaks();
        RC_ASSERT(r.clean());
      }));
}

TEST(MockclOomRetry, ImmediateSemantics) { check_oom_retry("immediate"); }
TEST(MockclOomRetry, DeferredSemantics) { check_oom_retry("deferred"); }
TEST(MockclOomRetry, HostOomSemantics) { check_oom_retry("host_oom"); }

// Every event the pools create (markers; the tests themselves ask for none) is released.
void check_events_released() {
  const auto calls = ctl().snapshot().calls;
  auto count = [&](const char* e) {
    auto it = calls.find(e);
    return it == calls.end() ? 0 : it->second;
  };
  RC_ASSERT(count("clEnqueueMarkerWithWaitList") == count("clReleaseEvent"));
  RC_TAG(count("clEnqueueMarkerWithWaitList") > 0 ? "markers used" : "no markers");
}

// ---- Release ordering --------------------------------------------------------------------------

struct op {
  int code = 0;  // see run_ordering
  int a = 0;
  int b = 0;
};

void showValue(const op& o, std::ostream& os) {
  os << "{" << o.code << "," << o.a << "," << o.b << "}";
}

// One live allocation of the test and the user id it was handed out under.
template <class P>
struct user {
  P block;
  int id = 0;
};

// Checks the executed-command log (testing/command_order.h): for every block, commands of a later
// user start after every command of an earlier user ends; an SVM free starts after every use of
// its allocation ends. `labels[key]` lists, in enqueue order, the user of each use command
// enqueued on block `key`.
void check_order(const std::vector<mockcl::command_record>& commands, const char* use_kind,
                 bool svm, const std::map<std::uint64_t, std::vector<int>>& labels) {
  const testing::order_check result =
      testing::check_command_order(commands, {use_kind}, svm, labels);
  if (!result) RC_FAIL(result.violation);
  RC_TAG(result.svm_frees > 0 ? "frees seen" : "no frees");
}

// Interprets `ops` against a pool made by `make_pool`; returns the labels for check_order.
// Codes: 0 allocate(a: size class, b: queue or -1), 1 use(a), 2 bind(a, b), 3 release(a),
// 4 enqueue_release(a, b), 5 unbind(a), 6 free_held, 7 flush(b).
template <class Pool, class Use, class Key>
std::map<std::uint64_t, std::vector<int>> run_ordering(const world& w, Pool& pool,
                                                       const std::vector<op>& ops, Use use_block,
                                                       Key key_of) {
  using P = decltype(pool.allocate(1));
  std::map<std::uint64_t, std::vector<int>> labels;
  std::vector<user<P>> live;
  int next_user = 0;
  const int nq = static_cast<int>(w.queues.size());
  for (const op& o : ops) {
    const int qi = o.b % (nq + 1) - 1;  // -1: no queue
    if (o.code == 0 || live.empty()) {
      live.push_back({pool.allocate(4096u * (1 + o.a % 3), w.q(qi)), ++next_user});
      continue;
    }
    user<P>& u = live[o.a % live.size()];
    switch (o.code) {
      case 1:
        if (u.block.queue() != nullptr) {
          labels[key_of(u.block)].push_back(u.id);
          use_block(u.block);
        }
        break;
      case 2:
        if (qi >= 0) u.block.bind_to_queue(w.q(qi));
        break;
      case 3:
        live.erase(live.begin() + o.a % live.size());
        break;
      case 4:
        u.block.enqueue_release(w.q(qi));
        live.erase(live.begin() + o.a % live.size());
        break;
      case 5:
        u.block.unbind_from_queue();
        break;
      case 6:
        pool.free_held();
        break;
      default:
        if (qi >= 0) clFlush(w.q(qi));
        break;
    }
  }
  return labels;
}

rc::Gen<std::vector<op>> ops_gen() {
  return rc::gen::container<std::vector<op>>(
      rc::gen::build<op>(rc::gen::set(&op::code, rc::gen::inRange(0, 8)),
                         rc::gen::set(&op::a, rc::gen::inRange(0, 64)),
                         rc::gen::set(&op::b, rc::gen::inRange(0, 64))));
}

TEST(MockclOrdering, SvmPoolOverRandomInterleavingsOnThreeQueues) {
  for (const char* schedule : {"eager", "lazy"}) {
    EXPECT_TRUE(rc::check(std::string("SVM release ordering, ") + schedule, [&] {
      const std::vector<op> ops = *ops_gen();
      const bool free_queue = *rc::gen::arbitrary<bool>();
      std::map<std::uint64_t, std::vector<int>> labels;
      {
        world w("gpu-256m", 3, schedule);
        {
          svm_pool pool{
              svm_allocator(w.context.get(), 0, CL_MEM_READ_WRITE, free_queue ? w.q(0) : nullptr)};
          const cl_uint pattern = 0xabcdef01;
          labels = run_ordering(
              w, pool, ops,
              [&](pooled_svm& p) {
                RC_ASSERT(clEnqueueSVMMemFill(p.queue(), p.ptr(), &pattern, sizeof(pattern), 4096,
                                              0, nullptr, nullptr) == CL_SUCCESS);
              },
              [](pooled_svm& p) { return reinterpret_cast<std::uint64_t>(p.ptr()); });
        }
        w.finish();
      }
      check_order(ctl().snapshot().commands, "svm_memfill", /*svm=*/true, labels);
      check_events_released();
      RC_ASSERT(leaks().clean());
    }));
  }
}

TEST(MockclOrdering, BufferPoolWithCrossQueueSafety) {
  EXPECT_TRUE(rc::check("buffer release ordering", [&] {
    const std::vector<op> ops = *ops_gen();
    std::map<std::uint64_t, std::vector<int>> labels;
    {
      world w("gpu-256m", 3, *rc::gen::element<std::string>("eager", "lazy"));
      {
        buffer_pool<> pool{immediate_buffer_allocator(w.q(0)), {.cross_queue_safety = true}};
        const cl_uint pattern = 7;
        labels = run_ordering(
            w, pool, ops,
            [&](pooled_buffer<>& b) {
              RC_ASSERT(clEnqueueFillBuffer(b.queue(), b.mem(), &pattern, sizeof(pattern), 0, 4096,
                                            0, nullptr, nullptr) == CL_SUCCESS);
            },
            [](pooled_buffer<>& b) { return ctl().object_id(b.mem()); });
      }
      w.finish();
    }
    check_order(ctl().snapshot().commands, "fill", /*svm=*/false, labels);
    check_events_released();
    RC_ASSERT(leaks().clean());
  }));
}

TEST(MockclOrdering, BufferPoolWithoutSafetyIsCaughtByTheChecker) {
  // The checker's premise: PyOpenCL-style reuse without ordering does show up in the log.
  std::map<std::uint64_t, std::vector<int>> labels;
  {
    world w("gpu-256m", 2);
    buffer_pool<> pool{immediate_buffer_allocator(w.q(0))};
    const cl_uint pattern = 7;
    std::uint64_t key = 0;
    {
      pooled_buffer<> a = pool.allocate(1 * MiB, w.q(0));
      key = ctl().object_id(a.mem());
      labels[key].push_back(1);
      ASSERT_EQ(clEnqueueFillBuffer(w.q(0), a, &pattern, 4, 0, 1 * MiB, 0, nullptr, nullptr), 0);
    }
    pooled_buffer<> b = pool.allocate(1 * MiB, w.q(1));
    labels[key].push_back(2);
    ASSERT_EQ(clEnqueueFillBuffer(w.q(1), b, &pattern, 4, 0, 1 * MiB, 0, nullptr, nullptr), 0);
    w.finish();
  }
  const auto commands = ctl().snapshot().commands;
  std::vector<mockcl::command_record> fills;
  for (const auto& r : commands)
    if (r.kind == "fill") fills.push_back(r);
  ASSERT_EQ(fills.size(), 2u);
  EXPECT_LT(fills[1].start, fills[0].end) << "without safety the second user overlaps the first";
}

// ---- Fault sweep -------------------------------------------------------------------------------

// Runs `ops` on a buffer pool (immediate allocator, cross-queue safety) and an SVM pool over two
// queues. Every exception must be a typed pool error. Returns the number of typed errors.
int run_mixed(const std::vector<op>& ops, const std::string& fault = "") {
  int errors = 0;
  std::optional<world> w;
  try {
    w.emplace("gpu-16m:max_alloc=16m", 2, "eager", fault);
  } catch (const clpool::pool_error&) {
    return -1;  // a fault hit the setup itself (context/queue creation): nothing to check
  }
  {
    std::optional<buffer_pool<>> bp;
    std::optional<svm_pool> sp;
    try {
      bp.emplace(immediate_buffer_allocator(w->q(0)),
                 buffer_pool_options{.cross_queue_safety = true});
      sp.emplace(svm_allocator(w->context.get(), 0, CL_MEM_READ_WRITE, w->q(0)));
    } catch (const clpool::pool_error&) {
      ++errors;
    }
    std::vector<pooled_buffer<>> buffers;
    std::vector<pooled_svm> svms;
    const cl_uint pattern = 1;
    for (const op& o : ops) {
      const int qi = o.b % 3 - 1;
      try {
        switch (o.code) {
          case 0:
            if (bp) buffers.push_back(bp->allocate(1 + (o.a % 8) * 1 * MiB, w->q(qi)));
            break;
          case 1:
            if (sp) svms.push_back(sp->allocate(4096u * (1 + o.a % 4), w->q(qi)));
            break;
          case 2:
            if (!buffers.empty()) {
              auto& b = buffers[o.a % buffers.size()];
              if (b.queue() != nullptr) {
                const cl_int s =
                    clEnqueueFillBuffer(b.queue(), b, &pattern, 4, 0, 4, 0, nullptr, nullptr);
                if (s != CL_SUCCESS) throw cl_error(s, "clEnqueueFillBuffer");
              }
            }
            break;
          case 3:
            if (!svms.empty()) {
              auto& p = svms[o.a % svms.size()];
              if (qi >= 0) p.bind_to_queue(w->q(qi));
            }
            break;
          case 4:
            if (!buffers.empty()) buffers.erase(buffers.begin() + o.a % buffers.size());
            break;
          case 5:
            if (!svms.empty()) {
              auto it = svms.begin() + o.a % svms.size();
              it->enqueue_release(w->q(qi));
              svms.erase(it);
            }
            break;
          case 6:
            if (bp) bp->free_held();
            if (sp) sp->free_held();
            break;
          default:
            if (!svms.empty()) svms[o.a % svms.size()].unbind_from_queue();
            break;
        }
      } catch (const clpool::pool_error&) {
        ++errors;  // cl_error, out_of_memory, invalid_use, ...: typed, as required
      }
      if (bp) RC_ASSERT(bp->pool().state_is_valid());
      if (sp) RC_ASSERT(sp->pool().state_is_valid());
    }
  }
  w->finish();
  return errors;
}

std::vector<std::string> sweep_entries() {
  // Releases and retains cannot fail on a real runtime (and a failed release leaks by definition);
  // mockcl never fails clGet*Info either, and refuses nth rules on them as never firing (they
  // were inert here before); every other entry point the pools call is swept.
  return {"clCreateBuffer",
          "clEnqueueMigrateMemObjects",
          "clSVMAlloc",
          "clEnqueueSVMFree",
          "clEnqueueMarkerWithWaitList",
          "clEnqueueBarrierWithWaitList",
          "clFlush",
          "clFinish",
          "clEnqueueFillBuffer"};
}

TEST(MockclFaultSweep, EveryCallPositionFailsCleanly) {
  EXPECT_TRUE(rc::check("fault sweep", [] {
    const std::vector<op> ops = *ops_gen();
    // A clean run first: how often each entry point is called.
    RC_ASSERT(run_mixed(ops) >= 0);
    const std::map<std::string, std::uint64_t> calls = ctl().snapshot().calls;
    RC_ASSERT(leaks().clean());
    int positions = 0;
    int typed_errors = 0;
    for (const std::string& entry : sweep_entries()) {
      auto it = calls.find(entry);
      const std::uint64_t n = it == calls.end() ? 0 : it->second;
      for (std::uint64_t k = 1; k <= n; ++k) {
        ++positions;
        const std::string rule = "nth:" + entry + ":" + std::to_string(k);
        if (run_mixed(ops, rule) > 0) ++typed_errors;
        const leak_report r = leaks();
        if (!r.clean()) RC_FAIL("leak after fault " + rule + ": " + r.describe());
      }
    }
    RC_CLASSIFY(positions > 20, "more than 20 fault positions");
    RC_CLASSIFY(typed_errors > 0, "some injected faults surfaced as typed errors");
  }));
}

// ---- Out-of-memory by value ---------------------------------------------------------------------

// Every OpenCL allocator reports a full device from try_allocate() (the pool's path) by value,
// with the same status and text allocate() throws, and leaks nothing either way.
template <class Allocator>
void check_refusal(Allocator& a, std::uint64_t fits, std::uint64_t too_big, const char* call) {
  static_assert(clpool::allocator_reports_oom_by_value<Allocator>);
  typename Allocator::handle_type first{};
  clpool::allocator_refusal refusal;
  ASSERT_TRUE(a.try_allocate(fits, first, refusal));
  typename Allocator::handle_type second{};
  EXPECT_FALSE(a.try_allocate(too_big, second, refusal));
  EXPECT_TRUE(is_out_of_memory_status(refusal.status)) << status_name(refusal.status);
  EXPECT_NE(refusal.message.find(call), std::string::npos) << refusal.message;
  try {
    auto h = a.allocate(too_big);
    a.deallocate(h, too_big);
    ADD_FAILURE() << "allocate() succeeded where try_allocate() was refused";
  } catch (const clpool::allocator_out_of_memory& e) {
    EXPECT_EQ(e.status(), refusal.status);
    EXPECT_EQ(std::string(e.what()), refusal.message);
  }
  a.deallocate(first, fits);
}

TEST(MockclOomByValue, EveryAllocatorRefusesByValueAndThrowsTheSame) {
  {
    world w("gpu-64m:max_alloc=64m");
    {
      deferred_buffer_allocator a(w.context.get());
      check_refusal(a, 40 * MiB, 40 * MiB, "clCreateBuffer");
      immediate_buffer_allocator b(w.q(0));
      check_refusal(b, 40 * MiB, 40 * MiB, "clCreateBuffer");
      svm_allocator c(w.context.get());
      check_refusal(c, 40 * MiB, 40 * MiB, "clSVMAlloc");
      host_pinned_allocator d(w.q(0));  // gpu-64m pins at most 16 MiB of host memory
      check_refusal(d, 10 * MiB, 10 * MiB, "clCreateBuffer");
    }
    EXPECT_EQ(live_count("mem"), 0u);
    w.finish();
  }
  EXPECT_TRUE(leaks().clean()) << leaks().describe();
  {
    // Deferred semantics: creation never fails, so the refusal comes from forcing the allocation.
    world w("gpu-64m:max_alloc=64m,semantics=deferred");
    {
      immediate_buffer_allocator a(w.q(0));
      check_refusal(a, 40 * MiB, 40 * MiB, "clEnqueueMigrateMemObjects");
    }
    EXPECT_EQ(live_count("mem"), 0u) << "the buffer whose forcing failed leaked";
    w.finish();
  }
  EXPECT_TRUE(leaks().clean()) << leaks().describe();
}

// A refusal at the second step of an allocation (mapping a pinned buffer; the forcing command
// failing when it runs, seen only by a waiting allocator) releases the buffer made by the first.
TEST(MockclOomByValue, SecondStepRefusalReleasesTheBuffer) {
  {
    world w("gpu-64m:max_alloc=64m");
    ASSERT_EQ(ctl().add_fault("nth:clEnqueueMapBuffer:1:CL_OUT_OF_RESOURCES"), "");
    host_pinned_allocator pinned(w.q(0));
    pinned_block block{};
    clpool::allocator_refusal refusal;
    EXPECT_FALSE(pinned.try_allocate(1 * MiB, block, refusal));
    EXPECT_EQ(refusal.status, CL_OUT_OF_RESOURCES);
    EXPECT_NE(refusal.message.find("clEnqueueMapBuffer"), std::string::npos) << refusal.message;
    EXPECT_EQ(live_count("mem"), 0u) << "the buffer whose mapping failed leaked";

    // The blocking map's command failing when it runs: the call returns the command's status, an
    // out-of-memory the pool can answer by freeing what it holds, not -14 (CL_EXEC_STATUS_ERROR_
    // FOR_EVENTS_IN_WAIT_LIST, which is for a wait list's events).
    ASSERT_EQ(ctl().add_fault("exec:clEnqueueMapBuffer:1:CL_MEM_OBJECT_ALLOCATION_FAILURE"), "");
    EXPECT_FALSE(pinned.try_allocate(1 * MiB, block, refusal));
    EXPECT_EQ(refusal.status, CL_MEM_OBJECT_ALLOCATION_FAILURE) << status_name(refusal.status);
    EXPECT_EQ(live_count("mem"), 0u) << "the buffer whose mapping failed leaked";

    ASSERT_EQ(ctl().add_fault("exec:clEnqueueMigrateMemObjects:1:CL_MEM_OBJECT_ALLOCATION_FAILURE"),
              "");
    immediate_buffer_allocator waiting(w.q(0), {.wait_for_allocation = true});
    buffer_block buffer{};
    EXPECT_FALSE(waiting.try_allocate(1 * MiB, buffer, refusal));
    EXPECT_EQ(refusal.status, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    EXPECT_EQ(live_count("mem"), 0u) << "the buffer whose forcing failed leaked";
    ASSERT_TRUE(waiting.try_allocate(1 * MiB, buffer, refusal));  // the fault fired once
    waiting.deallocate(buffer, 1 * MiB);
    w.finish();
  }
  EXPECT_TRUE(leaks().clean()) << leaks().describe();
}

// ---- Deferred out-of-memory --------------------------------------------------------------------

TEST(MockclDeferred, DeferredAllocatorOverCommitsAndTheErrorComesAtFirstUse) {
  {
    world w("gpu-64m:max_alloc=64m,semantics=deferred");
    buffer_pool<deferred_buffer_allocator> pool{deferred_buffer_allocator(w.context.get())};
    pooled_buffer<deferred_buffer_allocator> a = pool.allocate(40 * MiB);
    pooled_buffer<deferred_buffer_allocator> b =
        pool.allocate(40 * MiB);  // over-committed: no error
    EXPECT_EQ(pool.managed_bytes(), 2 * a.rounded_size());
    EXPECT_EQ(device_outstanding(), 0u) << "a deferred device charges nothing at creation";
    const cl_uint pattern = 0;
    EXPECT_EQ(clEnqueueFillBuffer(w.q(0), a, &pattern, 4, 0, 4, 0, nullptr, nullptr), CL_SUCCESS);
    const cl_int late = clEnqueueFillBuffer(w.q(0), b, &pattern, 4, 0, 4, 0, nullptr, nullptr);
    EXPECT_EQ(late, CL_MEM_OBJECT_ALLOCATION_FAILURE)
        << "the late error: " << status_name(late) << " at first use, outside the pool";
    w.finish();
  }
  EXPECT_TRUE(leaks().clean()) << leaks().describe();
}

TEST(MockclDeferred, ImmediateAllocatorIsTheRemedy) {
  {
    world w("gpu-64m:max_alloc=64m,semantics=deferred");
    buffer_pool<> pool{immediate_buffer_allocator(w.q(0))};
    pooled_buffer<> a = pool.allocate(40 * MiB);
    EXPECT_EQ(device_outstanding(), a.rounded_size()) << "forced at allocation";
    try {
      pool.allocate(40 * MiB);
      ADD_FAILURE() << "over-commit was not caught";
    } catch (const clpool::out_of_memory& e) {
      EXPECT_EQ(e.report().allocator_status, CL_MEM_OBJECT_ALLOCATION_FAILURE);
      EXPECT_NE(std::string(e.what()).find("clEnqueueMigrateMemObjects"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(live_count("mem"), 1u) << "the buffer whose forcing failed leaked";
    a.release();  // now held: the next request frees it and retries
    pooled_buffer<> b = pool.allocate(50 * MiB);
    EXPECT_EQ(pool.pool().statistics().oom_retries, 1u);
    EXPECT_EQ(pool.held_blocks(), 0u);
    w.finish();
  }
  EXPECT_TRUE(leaks().clean()) << leaks().describe();
}

TEST(MockclDeferred, WaitForAllocationCatchesExecutionTimeFailures) {
  {
    world w("gpu-64m:max_alloc=64m");
    // The migrate is accepted but fails when it runs: only a waiting allocator sees it.
    ASSERT_EQ(ctl().add_fault("exec:clEnqueueMigrateMemObjects:1:CL_MEM_OBJECT_ALLOCATION_FAILURE"),
              "");
    buffer_pool<> pool{immediate_buffer_allocator(w.q(0), {.wait_for_allocation = true})};
    EXPECT_THROW(pool.allocate(1 * MiB), clpool::out_of_memory);
    EXPECT_EQ(live_count("mem"), 0u);
    pooled_buffer<> ok = pool.allocate(1 * MiB);
    EXPECT_TRUE(ok.has_block());
    w.finish();
  }
  EXPECT_TRUE(leaks().clean()) << leaks().describe();
}

// ---- mockcl defects found while writing these tests (fixed in mockcl/runtime/scheduler.cc and
// mockcl/api/api_queue.cc; these keep them fixed) ----

// A queue whose last command completed kept that command's event (q->last) and the event kept the
// queue: after the user released everything, a context, a queue and an event stayed alive.
TEST(MockclFixedDefects, ReleasedQueueWithACompletedCommandIsDestroyed) {
  {
    world w("gpu-64m");
    cl_int s = CL_SUCCESS;
    mem_ref m = mem_ref::adopt(clCreateBuffer(w.context.get(), CL_MEM_READ_WRITE, 64, nullptr, &s));
    ASSERT_EQ(s, CL_SUCCESS);
    char data[64] = {};
    ASSERT_EQ(clEnqueueWriteBuffer(w.q(0), m.get(), CL_TRUE, 0, 64, data, 0, nullptr, nullptr), 0);
    clFinish(w.q(0));
  }
  EXPECT_EQ(live_count("event"), 0u);
  EXPECT_EQ(live_count("queue"), 0u);
  EXPECT_EQ(live_count("context"), 0u);
}

// clFinish did not advance the host's virtual clock when the queue's commands had already
// completed (eager mode), while clWaitForEvents on the same command did: a command enqueued on
// another queue after the host waited with clFinish started before the finished command ended.
TEST(MockclFixedDefects, ClFinishAdvancesTheHostClock) {
  {
    world w("gpu-64m", 2);
    cl_int s = CL_SUCCESS;
    mem_ref m =
        mem_ref::adopt(clCreateBuffer(w.context.get(), CL_MEM_READ_WRITE, MiB, nullptr, &s));
    const cl_uint pattern = 1;
    ASSERT_EQ(clEnqueueFillBuffer(w.q(0), m.get(), &pattern, 4, 0, MiB, 0, nullptr, nullptr), 0);
    ASSERT_EQ(clFinish(w.q(0)), CL_SUCCESS);
    ASSERT_EQ(clEnqueueFillBuffer(w.q(1), m.get(), &pattern, 4, 0, MiB, 0, nullptr, nullptr), 0);
    w.finish();
  }
  std::vector<mockcl::command_record> fills;
  for (const auto& r : ctl().snapshot().commands)
    if (r.kind == "fill") fills.push_back(r);
  ASSERT_EQ(fills.size(), 2u);
  EXPECT_GE(fills[1].start, fills[0].end) << "the host waited for the first fill with clFinish";
}

}  // namespace
}  // namespace clpool::opencl
