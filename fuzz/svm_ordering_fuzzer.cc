// Fuzzer 3: SVM and cross-queue release ordering, on the in-process mockcl's virtual-time
// scheduler.
//
// The input decodes into a configuration: the pool (svm_pool with no free queue, with the first
// or the last queue as free queue; buffer_pool with cross-queue safety over the immediate or the
// deferred allocator), 2 to 4 in-order queues plus one out-of-order queue, the schedule (eager or
// lazy, the out-of-order seed, the kernel duration) and the teardown order; then up to kMaxOps
// operations: allocate (unbound, bound to an in-order queue, or to the out-of-order queue), use a
// block on its queue (fill, kernel launch, or a copy / SVM memcpy between two blocks bound to the
// same queue), bind_to_queue (rebinding; the out-of-order queue), unbind_from_queue, release,
// enqueue_release (on any queue, the out-of-order one included), free_held, clFlush and clFinish.
//
// After every operation it checks: binding to the out-of-order queue (allocate, bind_to_queue,
// enqueue_release) is refused with invalid_use and changes nothing; unbind_from_queue returns
// only once every use enqueued on the block has executed; the pool's counters against the
// fuzzer's count of live allocations; mockcl reports no use after release and no double release;
// and the ordering rules on mockcl's executed-command log so far (pool/opencl/testing/
// command_order.h, shared with mockcl_pool_test): no command of a block's new user starts before
// every command of its previous user on it ended; an SVM free command starts after every use of
// its block ended; no real free happens while a use of the block runs. At teardown (allocations
// and pool in the order the input says, every queue finished) the check runs on the complete log,
// every enqueued use must have executed, every marker event the pool made must be released, and
// mockcl must have no live object and no outstanding byte. Any failure prints the configuration
// and the operations, then aborts.
#include <CL/cl.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fuzz/mockcl_world.h"
#include "mockcl/config/config.h"
#include "mockcl/runtime/control.h"
#include "pool/errors.h"
#include "pool/memory_pool.h"
#include "pool/opencl/buffer_pool.h"
#include "pool/opencl/cl_error.h"
#include "pool/opencl/svm_pool.h"
#include "pool/opencl/testing/command_order.h"

namespace clpool::fuzz {
namespace {

using namespace clpool::opencl;

constexpr std::size_t kMaxOps = 96;
constexpr std::size_t kMaxLive = 16;

enum class pool_kind : std::uint8_t {
  svm,
  svm_free_first,
  svm_free_last,
  buffer_immediate,
  buffer_deferred
};
const char* name_of(pool_kind k) {
  switch (k) {
    case pool_kind::svm:
      return "svm_pool, no free queue (host waits, clSVMFree)";
    case pool_kind::svm_free_first:
      return "svm_pool, free queue = queue 0 (clEnqueueSVMFree)";
    case pool_kind::svm_free_last:
      return "svm_pool, free queue = the last in-order queue";
    case pool_kind::buffer_immediate:
      return "buffer_pool<immediate_buffer_allocator> (allocator queue 0), cross_queue_safety";
    case pool_kind::buffer_deferred:
      return "buffer_pool<deferred_buffer_allocator>, cross_queue_safety";
  }
  return "?";
}
bool is_svm(pool_kind k) {
  return k == pool_kind::svm || k == pool_kind::svm_free_first || k == pool_kind::svm_free_last;
}

enum class op_kind : std::uint8_t {
  allocate,
  use_fill,
  use_kernel,
  use_copy,
  bind,
  unbind,
  release,
  enqueue_release,
  free_held,
  flush,
  finish
};

struct op {
  op_kind kind{};
  int a = 0;  // size class or index
  int b = 0;  // queue (-1 none, nq = the out-of-order queue) or second index
  std::string result;
};

struct user_block {
  int user = 0;  // increasing per allocation
  std::uint64_t key = 0;
  std::size_t bytes = 0;
};

template <class P>
struct slot {
  P block;
  user_block info;
};

struct run {
  pool_kind kind{};
  int nq = 2;
  bool lazy = false;
  std::uint64_t seed = 0, kernel_ns = 10000;
  bool pool_first = true;
  std::vector<op> ops;
  std::unique_ptr<mockcl_world> w;
  std::map<std::uint64_t, std::vector<int>> labels;
  int next_user = 0;

  [[noreturn]] void fail(const std::string& what) const {
    std::fprintf(stderr,
                 "\n==== svm_ordering_fuzzer: a release-ordering rule is broken ====\n"
                 "config: %s; %d in-order queues (0..%d) + out-of-order queue %d; schedule %s, "
                 "seed=%llu, kernel_ns=%llu; %s first at teardown\n"
                 "operations (%zu):\n",
                 name_of(kind), nq, nq - 1, nq, lazy ? "lazy" : "eager",
                 static_cast<unsigned long long>(seed), static_cast<unsigned long long>(kernel_ns),
                 pool_first ? "pool" : "allocations", ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      std::fprintf(stderr, "  #%zu %s\n", i, describe(ops[i]).c_str());
    }
    std::fprintf(stderr, "after operation #%zu: %s\n", ops.empty() ? 0 : ops.size() - 1,
                 what.c_str());
    std::fflush(stderr);
    std::abort();
  }

  std::string queue_name(int q) const {
    if (q < 0) return "none";
    if (q >= nq) return "out-of-order";
    return std::to_string(q);
  }
  std::string describe(const op& o) const {
    std::string s;
    switch (o.kind) {
      case op_kind::allocate:
        s = "allocate(" + std::to_string(4096 * (1 + o.a)) + ", queue " + queue_name(o.b) + ")";
        break;
      case op_kind::use_fill:
        s = "fill live[" + std::to_string(o.a) + "] on its queue";
        break;
      case op_kind::use_kernel:
        s = "kernel(live[" + std::to_string(o.a) + "]) on its queue";
        break;
      case op_kind::use_copy:
        s = "copy live[" + std::to_string(o.b) + "] -> live[" + std::to_string(o.a) +
            "] on their queue";
        break;
      case op_kind::bind:
        s = "live[" + std::to_string(o.a) + "].bind_to_queue(" + queue_name(o.b) + ")";
        break;
      case op_kind::unbind:
        s = "live[" + std::to_string(o.a) + "].unbind_from_queue()";
        break;
      case op_kind::release:
        s = "live[" + std::to_string(o.a) + "].release()";
        break;
      case op_kind::enqueue_release:
        s = "live[" + std::to_string(o.a) + "].enqueue_release(" + queue_name(o.b) + ")";
        break;
      case op_kind::free_held:
        s = "free_held()";
        break;
      case op_kind::flush:
        s = "clFlush(queue " + queue_name(o.b) + ")";
        break;
      case op_kind::finish:
        s = "clFinish(queue " + queue_name(o.b) + ")";
        break;
    }
    return s + (o.result.empty() ? "" : " -> " + o.result);
  }

  cl_command_queue q(int i) const {
    if (i < 0) return nullptr;
    return i >= nq ? w->out_of_order : w->queue(i);
  }

  // Checks the command log so far (or, with `complete`, the whole run's).
  void check_log(bool complete) const {
    const mockcl::accounting_snapshot s = mockcl::control().snapshot();
    if (s.reports.use_after_release != 0 || s.reports.double_release != 0) {
      fail("mockcl reports misuse: " + std::to_string(s.reports.use_after_release) +
           " use(s) after release, " + std::to_string(s.reports.double_release) +
           " double release(s)" +
           (s.reports.messages.empty() ? "" : "; last: " + s.reports.messages.back()));
    }
    const std::vector<std::string> kinds =
        is_svm(kind) ? std::vector<std::string>{"svm_memfill", "kernel", "svm_memcpy"}
                     : std::vector<std::string>{"fill", "kernel", "copy"};
    const testing::order_check r =
        testing::check_command_order(s.commands, kinds, is_svm(kind), labels, complete, &s.frees);
    if (!r) {
      if (std::getenv("CLPOOL_FUZZ_DUMP")) {  // CLPOOL_FUZZ_DUMP=1: the log and the frees
        for (const auto& c : s.commands) {
          std::string ms;
          for (auto m : c.mems) ms += " " + std::to_string(m);
          for (auto v : c.svm) ms += " svm" + std::to_string(v.address);
          std::fprintf(stderr, "cmd %llu q%llu %s %llu..%llu [%s]\n", (unsigned long long)c.id,
                       (unsigned long long)c.queue_id, c.kind.c_str(), (unsigned long long)c.start,
                       (unsigned long long)c.end, ms.c_str());
        }
        for (const auto& f : s.frees)
          std::fprintf(stderr, "free %s id %llu addr %llu size %llu time %llu\n", f.kind.c_str(),
                       (unsigned long long)f.id, (unsigned long long)f.address,
                       (unsigned long long)f.size, (unsigned long long)f.time);
      }
      fail(r.violation);
    }
  }
};

template <class Pool, class P>
struct driver {
  run& r;
  std::unique_ptr<Pool> pool;
  std::vector<slot<P>> live;

  std::uint64_t key_of(const P& b) const {
    if constexpr (std::is_same_v<P, pooled_svm>) {
      return reinterpret_cast<std::uint64_t>(b.ptr());
    } else {
      return mockcl::control().object_id(b.mem());
    }
  }

  void check_pool() const {
    const pool_counters c = pool->pool().counters();
    if (c.active_blocks != live.size()) {
      r.fail("the pool counts " + std::to_string(c.active_blocks) +
             " active blocks, the fuzzer holds " + std::to_string(live.size()));
    }
    if (!pool->pool().state_is_valid()) r.fail("state_is_valid() is false");
  }

  void enqueue_use(op& o, slot<P>& s, int how, slot<P>* other) {
    cl_command_queue queue = s.block.queue();
    const cl_icd_dispatch* d = r.w->d;
    const cl_uint pattern = 0xabcdef01;
    const size_t bytes = 4096;
    cl_int st = CL_SUCCESS;
    if constexpr (std::is_same_v<P, pooled_svm>) {
      if (how == 0) {
        st = d->clEnqueueSVMMemFill(queue, s.block.ptr(), &pattern, sizeof pattern, bytes, 0,
                                    nullptr, nullptr);
      } else if (how == 1) {
        if (d->clSetKernelArgSVMPointer(r.w->kernel, 0, s.block.ptr()) != CL_SUCCESS)
          r.fail("clSetKernelArgSVMPointer failed");
        const size_t global = 1;
        st = d->clEnqueueNDRangeKernel(queue, r.w->kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                       nullptr);
      } else {
        st = d->clEnqueueSVMMemcpy(queue, CL_FALSE, s.block.ptr(), other->block.ptr(), bytes, 0,
                                   nullptr, nullptr);
      }
    } else {
      cl_mem mem = s.block.mem();
      if (how == 0) {
        st = d->clEnqueueFillBuffer(queue, mem, &pattern, sizeof pattern, 0, bytes, 0, nullptr,
                                    nullptr);
      } else if (how == 1) {
        if (d->clSetKernelArg(r.w->kernel, 0, sizeof(cl_mem), &mem) != CL_SUCCESS)
          r.fail("clSetKernelArg failed");
        const size_t global = 1;
        st = d->clEnqueueNDRangeKernel(queue, r.w->kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                       nullptr);
      } else {
        st = d->clEnqueueCopyBuffer(queue, other->block.mem(), mem, 0, 0, bytes, 0, nullptr,
                                    nullptr);
      }
    }
    if (st != CL_SUCCESS) r.fail("enqueueing the use failed with " + std::string(status_name(st)));
    r.labels[s.info.key].push_back(s.info.user);
    if (other != nullptr) r.labels[other->info.key].push_back(other->info.user);
    o.result = "enqueued on queue " + std::to_string(queue_index(queue));
  }

  int queue_index(cl_command_queue queue) const {
    for (int i = 0; i < r.nq; ++i) {
      if (r.w->queue(i) == queue) return i;
    }
    return -1;
  }

  // Expects `f` to throw invalid_use (an out-of-order queue) and change nothing.
  template <class F>
  void expect_refused(op& o, const char* what, F&& f) {
    const pool_counters before = pool->pool().counters();
    bool refused = false;
    try {
      f();
    } catch (const invalid_use&) {
      refused = true;
    }
    if (!refused) r.fail(std::string(what) + " accepted the out-of-order queue");
    const pool_counters after = pool->pool().counters();
    if (after.active_blocks != before.active_blocks || after.held_blocks != before.held_blocks) {
      r.fail(std::string(what) + " was refused but changed the pool's counters");
    }
    o.result = "invalid_use (refused)";
  }

  void execute(op& o) {
    const int nq = r.nq;
    switch (o.kind) {
      case op_kind::allocate: {
        const std::uint64_t size = 4096u * (1 + o.a);
        if (o.b == nq) {
          expect_refused(o, "allocate", [&] { pool->allocate(size, r.q(o.b)); });
          break;
        }
        P b = pool->allocate(size, r.q(o.b));
        if (!b.has_block() || b.queue() != r.q(o.b))
          r.fail("the new allocation is not bound to its queue");
        const std::uint64_t key = key_of(b);
        live.push_back({std::move(b), {++r.next_user, key, size}});
        o.result = "user " + std::to_string(r.next_user) + ", block " + std::to_string(key);
        break;
      }
      case op_kind::use_fill:
      case op_kind::use_kernel:
      case op_kind::use_copy: {
        slot<P>& s = live[static_cast<std::size_t>(o.a)];
        if (s.block.queue() == nullptr) {
          o.result = "unbound: skipped";
          break;
        }
        if (o.kind == op_kind::use_copy) {
          slot<P>& other = live[static_cast<std::size_t>(o.b)];
          if (o.a == o.b || other.block.queue() != s.block.queue()) {
            o.result = "not two blocks on one queue: skipped";
            break;
          }
          enqueue_use(o, s, 2, &other);
        } else {
          enqueue_use(o, s, o.kind == op_kind::use_fill ? 0 : 1, nullptr);
        }
        break;
      }
      case op_kind::bind: {
        slot<P>& s = live[static_cast<std::size_t>(o.a)];
        cl_command_queue before = s.block.queue();
        if (o.b == nq) {
          expect_refused(o, "bind_to_queue", [&] { s.block.bind_to_queue(r.q(o.b)); });
          if (s.block.queue() != before) r.fail("a refused bind_to_queue changed the binding");
          break;
        }
        s.block.bind_to_queue(r.q(o.b));
        if (s.block.queue() != r.q(o.b)) r.fail("bind_to_queue did not bind");
        o.result = "bound";
        break;
      }
      case op_kind::unbind: {
        slot<P>& s = live[static_cast<std::size_t>(o.a)];
        s.block.unbind_from_queue();
        if (s.block.queue() != nullptr) r.fail("unbind_from_queue left a queue");
        // The host waited: every use enqueued on the block so far has executed.
        const mockcl::accounting_snapshot snap = mockcl::control().snapshot();
        std::size_t executed = 0;
        for (const auto& c : snap.commands) {
          if (is_svm(r.kind)) {
            for (const auto& range : c.svm)
              executed += range.address == s.info.key && c.kind != "svm_free";
          } else {
            for (std::uint64_t m : c.mems) executed += m == s.info.key && c.kind != "migrate";
          }
        }
        std::size_t enqueued = r.labels[s.info.key].size();
        if (executed < enqueued) {
          r.fail("unbind_from_queue returned with " + std::to_string(enqueued - executed) +
                 " use(s) of block " + std::to_string(s.info.key) + " not executed");
        }
        o.result = "unbound";
        break;
      }
      case op_kind::release:
        live[static_cast<std::size_t>(o.a)].block.release();
        live.erase(live.begin() + o.a);
        break;
      case op_kind::enqueue_release: {
        slot<P>& s = live[static_cast<std::size_t>(o.a)];
        if (o.b == nq) {
          expect_refused(o, "enqueue_release", [&] { s.block.enqueue_release(r.q(o.b)); });
          if (!s.block.has_block()) r.fail("a refused enqueue_release released the block");
          break;
        }
        s.block.enqueue_release(r.q(o.b));
        if (s.block.has_block()) r.fail("enqueue_release kept the block");
        live.erase(live.begin() + o.a);
        break;
      }
      case op_kind::free_held:
        pool->free_held();
        break;
      case op_kind::flush:
        r.w->d->clFlush(r.q(o.b));
        break;
      case op_kind::finish:
        r.w->d->clFinish(r.q(o.b));
        break;
    }
  }

  void teardown() {
    if (r.pool_first) {
      pool.reset();
      live.clear();
    } else {
      live.clear();
      pool.reset();
    }
  }
};

template <class Pool, class P>
void drive(run& r, FuzzedDataProvider& in, std::unique_ptr<Pool> pool) {
  driver<Pool, P> dr{r, std::move(pool), {}};
  const bool trace = trace_mode();
  const int nq = r.nq;
  while (in.remaining_bytes() > 0 && r.ops.size() < kMaxOps) {
    op o;
    const unsigned pick = in.ConsumeIntegralInRange<unsigned>(0, 31);
    const int n = static_cast<int>(dr.live.size());
    auto index = [&] { return in.ConsumeIntegralInRange<int>(0, n - 1); };
    // Queue choices: -1 (none), in-order queues, and now and then the out-of-order one.
    auto queue = [&](bool allow_none) {
      const int v = in.ConsumeIntegralInRange<int>(allow_none ? -1 : 0, nq + 1);
      return v > nq ? in.ConsumeIntegralInRange<int>(0, nq - 1) : v;
    };
    if (pick < 8 || n == 0) {
      if (n >= static_cast<int>(kMaxLive)) continue;
      o.kind = op_kind::allocate;
      o.a = in.ConsumeIntegralInRange<int>(0, 2);
      o.b = queue(true);
    } else if (pick < 16) {
      o.kind = pick < 11 ? op_kind::use_fill : pick < 14 ? op_kind::use_kernel : op_kind::use_copy;
      o.a = index();
      if (o.kind == op_kind::use_copy) o.b = index();
    } else if (pick < 19) {
      o.kind = op_kind::bind;
      o.a = index();
      o.b = queue(false);
    } else if (pick < 20) {
      o.kind = op_kind::unbind;
      o.a = index();
    } else if (pick < 23) {
      o.kind = op_kind::release;
      o.a = index();
    } else if (pick < 26) {
      o.kind = op_kind::enqueue_release;
      o.a = index();
      o.b = queue(true);
    } else if (pick < 27) {
      o.kind = op_kind::free_held;
    } else if (pick < 30) {
      o.kind = op_kind::flush;
      o.b = in.ConsumeIntegralInRange<int>(0, nq);
    } else {
      o.kind = op_kind::finish;
      o.b = in.ConsumeIntegralInRange<int>(0, nq);
    }
    r.ops.push_back(o);
    try {
      dr.execute(r.ops.back());
    } catch (const std::exception& e) {
      r.fail(std::string("unexpected exception: ") + e.what());
    }
    if (trace) {
      std::fprintf(stderr, "svm_ordering_fuzzer: #%zu %s\n", r.ops.size() - 1,
                   r.describe(r.ops.back()).c_str());
    }
    dr.check_pool();
    r.check_log(false);
  }
  dr.teardown();
  for (int i = 0; i <= nq; ++i) r.w->d->clFinish(r.q(i));
  r.check_log(true);
}

}  // namespace
}  // namespace clpool::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clpool;
  using namespace clpool::fuzz;
  FuzzedDataProvider in(data, size);
  run r;
  r.kind = static_cast<pool_kind>(in.ConsumeIntegralInRange<unsigned>(0, 4));
  r.nq = in.ConsumeIntegralInRange<int>(2, 4);
  r.lazy = in.ConsumeBool();
  r.seed = in.ConsumeIntegralInRange<std::uint64_t>(0, 3);
  static const std::uint64_t kKernelNs[] = {10000, 1000, 100000};
  r.kernel_ns = kKernelNs[in.ConsumeIntegralInRange<int>(0, 2)];
  r.pool_first = in.ConsumeBool();
  mockcl::device_config dev;
  dev.name = "fuzz";
  const std::string schedule = std::string(r.lazy ? "lazy" : "eager") +
                               ",seed=" + std::to_string(r.seed) +
                               ",kernel_ns=" + std::to_string(r.kernel_ns);
  r.w = std::make_unique<mockcl_world>(
      [&](const std::string& why) { r.fail("mockcl setup: " + why); },
      std::vector<mockcl::device_config>{dev}, r.nq, schedule, /*with_out_of_order_queue=*/true);
  cl_command_queue q0 = r.w->queue(0);
  switch (r.kind) {
    case pool_kind::svm:
    case pool_kind::svm_free_first:
    case pool_kind::svm_free_last: {
      cl_command_queue free_queue = r.kind == pool_kind::svm              ? nullptr
                                    : r.kind == pool_kind::svm_free_first ? q0
                                                                          : r.w->queue(r.nq - 1);
      drive<svm_pool, pooled_svm>(r, in,
                                  std::make_unique<svm_pool>(svm_allocator(
                                      r.w->context, 0, CL_MEM_READ_WRITE, free_queue)));
      break;
    }
    case pool_kind::buffer_immediate:
      drive<buffer_pool<immediate_buffer_allocator>, pooled_buffer<immediate_buffer_allocator>>(
          r, in,
          std::make_unique<buffer_pool<immediate_buffer_allocator>>(
              immediate_buffer_allocator(q0), buffer_pool_options{.cross_queue_safety = true}));
      break;
    case pool_kind::buffer_deferred:
      drive<buffer_pool<deferred_buffer_allocator>, pooled_buffer<deferred_buffer_allocator>>(
          r, in,
          std::make_unique<buffer_pool<deferred_buffer_allocator>>(
              deferred_buffer_allocator(r.w->context),
              buffer_pool_options{.cross_queue_safety = true}));
      break;
  }
  // Every event the pool made (markers; the fuzzer asks for none) was released.
  const mockcl::accounting_snapshot s = mockcl::control().snapshot();
  auto calls = [&](const char* e) {
    auto it = s.calls.find(e);
    return it == s.calls.end() ? std::uint64_t{0} : it->second;
  };
  if (calls("clEnqueueMarkerWithWaitList") != calls("clReleaseEvent")) {
    r.fail(std::to_string(calls("clEnqueueMarkerWithWaitList")) + " markers enqueued, " +
           std::to_string(calls("clReleaseEvent")) + " events released");
  }
  r.w.reset();
  const mockcl::accounting_snapshot end = mockcl::control().snapshot();
  for (const auto& d : end.devices) {
    if (d.outstanding != 0)
      r.fail("outstanding bytes at teardown: " + std::to_string(d.outstanding));
  }
  for (const auto& [k, n] : end.live) {
    if (n != 0) r.fail("live mockcl " + k + " objects at teardown: " + std::to_string(n));
  }
  if (end.reports.use_after_release != 0 || end.reports.double_release != 0 ||
      end.reports.leaked_at_context_release != 0) {
    r.fail("mockcl reports misuse at teardown");
  }
  return 0;
}
