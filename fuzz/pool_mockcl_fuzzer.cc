// Fuzzer 2: the pool over mockcl (in-process) through the OpenCL allocators, against a model.
//
// The input decodes (FuzzedDataProvider) into a configuration: the pool kind (buffer_pool over
// immediate_buffer_allocator, with or without wait_for_allocation; buffer_pool over
// deferred_buffer_allocator; svm_pool with or without a free queue; host_pinned_pool),
// leading_bits, and one mockcl device (semantics immediate / deferred / host_oom; for an SVM pool
// on a deferred device, whether SVM blocks are charged at clSVMAlloc or at first use; capacity,
// max alloc, host-pinned budget); then up to kMaxOps operations: allocate (0, 1, small, edges of
// max alloc and capacity, far above both, up to 2^64 - 1), release, free_held, stop_holding,
// set_limit, trim, use (a fill or a kernel launch on the queue: what charges a deferred buffer),
// clFinish, and fault injection (the Nth next call of an entry point fails with a status, or the
// Nth next command of an entry point fails when it executes).
//
// The model knows every OpenCL call the allocators make, so it predicts each call's outcome
// (injected fault, CL_INVALID_BUFFER_SIZE above max alloc, out of memory at the device) and from
// that the pool's: hit, miss, out_of_memory (freeing held blocks worth the shortfall, then all,
// then raising, exactly as memory_pool does), or cl_error with the status. After EVERY operation
// it checks: every pool counter and statistic; mockcl's call counts of the modelled entry points
// and its injected-fault count; what each device has charged (outstanding bytes, or the pinned
// budget's) == the bytes of the pool's blocks that are charged (every block, except a deferred
// allocator's buffers on a deferred device, and SVM blocks on a device with svm_oom_at =
// first_use, before their first use: those are charged by the use that first needs them, and a
// use that does not fit fails with CL_MEM_OBJECT_ALLOCATION_FAILURE); the real frees mockcl
// recorded (which block, how many bytes credited); mockcl's misuse reports (use after release,
// double release, leaks at context release). Independently of the model: out_of_memory only when
// the request cannot fit even with nothing held (charge-at-creation kinds, no fault fired),
// CL_INVALID_BUFFER_SIZE frees nothing held. Teardown (pool first or allocations first) must leave
// zero outstanding bytes and no live mockcl object. Any mismatch prints the configuration and the
// operations, then aborts.
//
// The pool's OpenCL calls (clCreateBuffer, ...) go to the in-process runtime: every mockcl handle
// carries the in-process dispatch table, which the ICD loader (Bazel) or fuzz/mockcl_direct.cc
// (OSS-Fuzz) follows. No vendors directory and no libmockcl.so are involved.
#include <CL/cl.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/mockcl_world.h"
#include "fuzz/pool_checks.h"
#include "mockcl/config/config.h"
#include "mockcl/runtime/control.h"
#include "pool/bins.h"
#include "pool/errors.h"
#include "pool/memory_pool.h"
#include "pool/opencl/buffer_pool.h"
#include "pool/opencl/cl_error.h"
#include "pool/opencl/host_pinned_pool.h"
#include "pool/opencl/svm_pool.h"

namespace clpool::fuzz {
namespace {

using namespace clpool::opencl;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kMaxOps = 64;
constexpr std::size_t kMaxLive = 64;

// ----------------------------------------------------------------------------------------------
// Configuration and operations.

enum class pool_kind : std::uint8_t {
  immediate,
  immediate_wait,
  deferred,
  svm,
  svm_free_queue,
  pinned
};
const char* name_of(pool_kind k) {
  switch (k) {
    case pool_kind::immediate:
      return "buffer_pool<immediate_buffer_allocator>";
    case pool_kind::immediate_wait:
      return "buffer_pool<immediate_buffer_allocator{wait_for_allocation}>";
    case pool_kind::deferred:
      return "buffer_pool<deferred_buffer_allocator>";
    case pool_kind::svm:
      return "svm_pool (no free queue: clSVMFree)";
    case pool_kind::svm_free_queue:
      return "svm_pool (free queue: clEnqueueSVMFree)";
    case pool_kind::pinned:
      return "host_pinned_pool";
  }
  return "?";
}
bool is_svm(pool_kind k) { return k == pool_kind::svm || k == pool_kind::svm_free_queue; }

// The entry points the model counts (every call of them in the process is predicted).
enum entry : std::uint8_t {
  e_create_buffer,
  e_migrate,
  e_wait,
  e_svm_alloc,
  e_map,
  e_fill,
  e_svm_fill,
  e_kernel,
  e_finish,
  e_count
};
const char* const kEntryNames[e_count] = {
    "clCreateBuffer",      "clEnqueueMigrateMemObjects", "clWaitForEvents",
    "clSVMAlloc",          "clEnqueueMapBuffer",         "clEnqueueFillBuffer",
    "clEnqueueSVMMemFill", "clEnqueueNDRangeKernel",     "clFinish"};

enum class op_kind : std::uint8_t {
  allocate,
  release,
  free_held,
  stop_holding,
  set_limit,
  trim,
  use_fill,
  use_kernel,
  finish,
  fault_nth,
  fault_exec,
  discard
};

struct op {
  op_kind kind{};
  std::uint64_t a = 0;  // size, index, limit, target, N
  int b = 0;            // entry for faults
  int status = 0;       // injected status
  std::string result;   // what the model expected (filled as it runs)
};

std::string describe(const op& o) {
  char buf[200];
  const auto a = static_cast<unsigned long long>(o.a);
  switch (o.kind) {
    case op_kind::allocate:
      std::snprintf(buf, sizeof buf, "allocate(%llu)", a);
      break;
    case op_kind::release:
      std::snprintf(buf, sizeof buf, "live[%llu].release()", a);
      break;
    case op_kind::discard:
      std::snprintf(buf, sizeof buf, "live[%llu].discard()", a);
      break;
    case op_kind::free_held:
      std::snprintf(buf, sizeof buf, "free_held()");
      break;
    case op_kind::stop_holding:
      std::snprintf(buf, sizeof buf, "stop_holding()");
      break;
    case op_kind::set_limit:
      std::snprintf(buf, sizeof buf, "set_limit(%llu)", a);
      break;
    case op_kind::trim:
      std::snprintf(buf, sizeof buf, "trim(%llu)", a);
      break;
    case op_kind::use_fill:
      std::snprintf(buf, sizeof buf, "fill live[%llu] on the queue", a);
      break;
    case op_kind::use_kernel:
      std::snprintf(buf, sizeof buf, "kernel(live[%llu]) on the queue", a);
      break;
    case op_kind::finish:
      std::snprintf(buf, sizeof buf, "clFinish(queue)");
      break;
    case op_kind::fault_nth:
      std::snprintf(buf, sizeof buf, "fault nth:%s:%llu:%s", kEntryNames[o.b], a,
                    status_name(o.status));
      break;
    case op_kind::fault_exec:
      std::snprintf(buf, sizeof buf, "fault exec:%s:%llu:%s", kEntryNames[o.b], a,
                    status_name(o.status));
      break;
  }
  return std::string(buf) + (o.result.empty() ? "" : " -> " + o.result);
}

// ----------------------------------------------------------------------------------------------
// The model.

struct block_info {
  std::uint64_t rounded = 0;
  bool charged = false;
  bool live = false;
};

struct live_alloc {
  std::uint64_t size = 0;
  std::uint64_t rounded = 0;
  std::uint64_t id = 0;  // mockcl object id of the block
};

struct fault_rule {
  bool armed = false;
  bool exec = false;
  int entry = 0;
  std::uint64_t n = 0;
  std::uint64_t count = 0;
  int status = 0;
};

// The outcome of one allocator call, as the model predicts it.
struct attempt {
  int status = CL_SUCCESS;  // 0: a block; OOM statuses: allocator_out_of_memory; else cl_error
  bool fault = false;       // an injected fault decided it
};

bool oom_status(int s) {
  return s == CL_MEM_OBJECT_ALLOCATION_FAILURE || s == CL_OUT_OF_RESOURCES ||
         s == CL_OUT_OF_HOST_MEMORY;
}

struct model {
  pool_kind kind{};
  mockcl::device_config dev;
  unsigned leading_bits = 4;
  std::uint64_t limit = unlimited;
  bool holding = true;
  std::map<std::uint64_t, std::uint64_t> held;  // rounded -> blocks
  std::uint64_t held_bytes = 0, held_blocks = 0;
  std::vector<live_alloc> live;
  std::uint64_t active_bytes = 0, active_rounded = 0;
  pool_statistics stats;
  oom_cause last_cause = oom_cause::allocator;
  int last_allocator_status = 0;
  // The device's side.
  std::uint64_t charged = 0;         // device outstanding (non-pinned)
  std::uint64_t pinned_charged = 0;  // pinned budget used
  std::uint64_t calls[e_count] = {};
  std::uint64_t faults_fired = 0;
  fault_rule rule;
  std::map<std::uint64_t, block_info> blocks;  // every block the pool has and mockcl has not freed
  std::uint64_t pending_frees = 0;  // frees of held blocks decided, matched against mockcl's log
  std::vector<std::uint64_t> freed_sizes;  // rounded sizes the model freed in this step
  std::uint64_t transient_frees = 0;  // buffers an allocator made and released in a failed call

  std::uint64_t managed() const { return active_rounded + held_bytes; }
  bool charges_at_creation() const {
    if (is_svm(kind)) return !dev.svm_first_use;
    return !(kind == pool_kind::deferred && dev.semantics == mockcl::alloc_semantics::deferred);
  }
  int oom_code() const {
    return dev.semantics == mockcl::alloc_semantics::host_oom ? CL_OUT_OF_HOST_MEMORY
                                                              : CL_MEM_OBJECT_ALLOCATION_FAILURE;
  }

  // A call of `e`: the status an armed nth rule injects, or 0.
  int call(int e) {
    ++calls[e];
    if (rule.armed && !rule.exec && rule.entry == e && ++rule.count == rule.n) {
      rule.armed = false;
      ++faults_fired;
      return rule.status;
    }
    return 0;
  }
  // A command of `e` accepted: the status an armed exec rule makes it end with, or 0.
  int executes(int e) {
    if (rule.armed && rule.exec && rule.entry == e && ++rule.count == rule.n) {
      rule.armed = false;
      ++faults_fired;  // eager schedule: it runs (and fails) at once
      return rule.status;
    }
    return 0;
  }
  // Charges the device (or the pinned budget) as mockcl does; the OOM status or 0.
  int charge(std::uint64_t bytes, bool pinned) {
    std::uint64_t& used = pinned ? pinned_charged : charged;
    const std::uint64_t cap = pinned ? dev.pinned : dev.capacity;
    if (used + bytes > cap || used + bytes < bytes) return oom_code();
    used += bytes;
    return 0;
  }
  void credit(std::uint64_t bytes, bool pinned) { (pinned ? pinned_charged : charged) -= bytes; }
  // A block the pool frees: with every block charged at creation its bytes come back at once
  // (eager schedule: nothing is pending). Otherwise check_device credits it when mockcl reports
  // which block it was (a deferred buffer is charged only once used).
  void credit_freed(std::uint64_t bytes) {
    if (charges_at_creation()) credit(bytes, kind == pool_kind::pinned);
  }

  // One allocator.allocate(rounded): the calls it makes and their outcome.
  attempt allocator_call(std::uint64_t r) {
    attempt a;
    auto fail = [&](int s, bool fault) {
      a.status = s;
      a.fault = fault;
      return a;
    };
    if (is_svm(kind)) {
      if (r > dev.max_alloc)
        return fail(CL_INVALID_BUFFER_SIZE, false);  // checked by the allocator
      if (call(e_svm_alloc) != 0) return fail(CL_MEM_OBJECT_ALLOCATION_FAILURE, true);  // NULL
      // svm_oom_at = first_use: clSVMAlloc charges nothing; the block's first use does.
      if (!dev.svm_first_use && charge(r, false) != 0) {
        return fail(CL_MEM_OBJECT_ALLOCATION_FAILURE, false);
      }
      return a;
    }
    const bool pinned = kind == pool_kind::pinned;
    if (int f = call(e_create_buffer)) return fail(f, true);
    if (r > dev.max_alloc) return fail(CL_INVALID_BUFFER_SIZE, false);
    const bool now = pinned || dev.semantics != mockcl::alloc_semantics::deferred;
    if (now) {
      if (int s = charge(r, pinned)) return fail(s, false);
    }
    bool charged_now = now;
    auto undo = [&] {  // the allocator releases the buffer it made before throwing
      if (charged_now) credit(r, pinned);
      ++transient_frees;
    };
    if (kind == pool_kind::pinned) {
      if (int f = call(e_map)) {
        undo();
        return fail(f, true);
      }
      if (int x = executes(e_map)) {  // a blocking map: its failure is the call's
        undo();
        return fail(x, true);
      }
      return a;
    }
    if (kind == pool_kind::deferred) return a;
    // Immediate allocator: a migration forces the allocation.
    if (int f = call(e_migrate)) {
      undo();
      return fail(f, true);
    }
    if (!charged_now) {
      if (int s = charge(r, false)) {
        undo();
        return fail(s, false);
      }
      charged_now = true;
    }
    const int exec = executes(e_migrate);
    if (kind == pool_kind::immediate_wait) {
      if (int f = call(e_wait)) {
        undo();
        return fail(f, true);
      }
      if (exec != 0) {
        undo();
        return fail(exec, true);
      }
    }
    return a;
  }

  std::uint64_t free_largest(std::uint64_t target, bool is_trim) {
    std::uint64_t freed = 0;
    while (freed < target && !held.empty()) {
      auto largest = std::prev(held.end());
      const std::uint64_t bytes = largest->first;
      if (--largest->second == 0) held.erase(largest);
      --held_blocks;
      held_bytes -= bytes;
      freed += bytes;
      ++stats.allocator_frees;
      freed_sizes.push_back(bytes);
      credit_freed(bytes);
      if (is_trim) {
        ++stats.blocks_trimmed;
        stats.bytes_trimmed += bytes;
      }
    }
    return freed;
  }

  // A request in the bin that holds max alloc, when that bin's size is above it (pool/allocator.h
  // largest_block): the pool makes its block at the request's own size and never keeps it.
  bool unpooled(std::uint64_t size) const {
    return size != 0 && rounded_size(dev.max_alloc, leading_bits) > dev.max_alloc &&
           bin_number(size, leading_bits) == bin_number(dev.max_alloc, leading_bits);
  }
  // The bytes of the pool's block for a request of `size`.
  std::uint64_t block_of(std::uint64_t size) const {
    return unpooled(size) ? size : rounded_size(size, leading_bits);
  }

  // The pool's allocate(), step by step (memory_pool.h / pool_state.h). Returns "hit", "miss",
  // "out_of_memory", "argument_error" or "cl_error"; `error_status` gets a cl_error's status.
  std::string allocate(std::uint64_t size, int& error_status, bool& fault_decided, bool& hit) {
    hit = false;
    if (size == 0) return "empty";
    const std::uint64_t r = block_of(size);
    if (!unpooled(size) && held.count(r) != 0) {
      hit = true;
      return "hit";
    }
    for (unsigned step = 0;; ++step) {
      if (r > kMax - active_rounded) return "argument_error";
      const std::uint64_t m = managed();
      const std::uint64_t room = m < limit ? limit - m : 0;
      std::uint64_t deficit = 0;
      if (r > room) {
        deficit = r - room;
        last_cause = oom_cause::limit;
      } else {
        const attempt at = allocator_call(r);
        fault_decided = fault_decided || at.fault;
        if (at.status == CL_SUCCESS) {
          ++stats.allocator_allocations;
          return "miss";
        }
        if (!oom_status(at.status)) {
          error_status = at.status;
          return "cl_error";
        }
        ++stats.allocator_failures;
        deficit = r;
        last_cause = oom_cause::allocator;
        last_allocator_status = at.status;
      }
      for (;; ++step) {
        if (step == 0 && free_largest(deficit, false) != 0) break;
        if (step == 1 && free_largest(kMax, false) != 0) break;
        if (step >= 2) {
          ++stats.ooms_raised;
          return "out_of_memory";
        }
      }
      ++stats.oom_retries;
    }
  }

  void activate(std::uint64_t size, std::uint64_t r, std::uint64_t id, bool hit) {
    if (hit) {
      if (--held[r] == 0) held.erase(r);
      --held_blocks;
      held_bytes -= r;
    }
    live.push_back({size, r, id});
    active_bytes += size;
    active_rounded += r;
    if (active_bytes > stats.peak_active_bytes) stats.peak_active_bytes = active_bytes;
    ++(hit ? stats.hits : stats.misses);
    if (!hit && managed() > stats.peak_managed_bytes) stats.peak_managed_bytes = managed();
  }

  // A release: held, or (not holding) freed.
  // A release, or with `discard` an allocation's discard(): its block never held.
  void release(std::size_t i, bool discard = false) {
    const live_alloc a = live[i];
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    active_bytes -= a.size;
    active_rounded -= a.rounded;
    blocks[a.id].live = false;
    if (discard || !holding || unpooled(a.size)) {
      ++stats.allocator_frees;
      freed_sizes.push_back(a.rounded);
      credit_freed(a.rounded);
      return;
    }
    ++held[a.rounded];
    ++held_blocks;
    held_bytes += a.rounded;
  }

  bool set_limit(std::uint64_t new_limit) {
    if (new_limit < active_rounded) return false;
    limit = new_limit;
    if (managed() > limit) free_largest(managed() - limit, false);
    return true;
  }
};

// ----------------------------------------------------------------------------------------------
// The system under test.

template <class Pool, class Alloc>
struct pool_box {
  std::unique_ptr<Pool> pool;
  std::vector<Alloc> live;
};

struct run {
  pool_kind kind{};
  mockcl::device_config dev;
  unsigned leading_bits = 4;
  bool pool_first = true;
  std::vector<op> ops;
  model m;
  std::unique_ptr<mockcl_world> w;
  std::optional<
      pool_box<buffer_pool<immediate_buffer_allocator>, pooled_buffer<immediate_buffer_allocator>>>
      imm;
  std::optional<
      pool_box<buffer_pool<deferred_buffer_allocator>, pooled_buffer<deferred_buffer_allocator>>>
      def;
  std::optional<pool_box<svm_pool, pooled_svm>> svm;
  std::optional<pool_box<host_pinned_pool, pinned_memory>> pin;
  std::size_t frees_seen = 0;

  [[noreturn]] void fail(const std::string& what) const {
    std::fprintf(stderr,
                 "\n==== pool_mockcl_fuzzer: the pool over mockcl disagrees with the model ====\n"
                 "config: %s, leading_bits=%u, %s first at teardown\n"
                 "device: %s\n"
                 "operations (%zu):\n",
                 name_of(kind), leading_bits, pool_first ? "pool" : "allocations",
                 mockcl::format_devices({dev}).c_str(), ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      std::fprintf(stderr, "  #%zu %s\n", i, describe(ops[i]).c_str());
    }
    std::fprintf(stderr, "after operation #%zu: %s\n", ops.empty() ? 0 : ops.size() - 1,
                 what.c_str());
    std::fflush(stderr);
    std::abort();
  }
  void expect_eq(const std::string& what, std::uint64_t got, std::uint64_t want) const {
    if (got != want) {
      fail(what + ": got " + std::to_string(got) + ", the model says " + std::to_string(want));
    }
  }

  std::size_t live_count() const {
    if (imm) return imm->live.size();
    if (def) return def->live.size();
    if (svm) return svm->live.size();
    return pin->live.size();
  }

  // Calls f(core memory_pool&) for whichever pool this run has (if it still exists).
  template <class F>
  void with_core(F&& f) const {
    if (imm && imm->pool) f(imm->pool->pool());
    if (def && def->pool) f(def->pool->pool());
    if (svm && svm->pool) f(svm->pool->pool());
    if (pin && pin->pool) f(pin->pool->pool());
  }
  template <class F>
  void with_mut_core(F&& f) {
    if (imm && imm->pool) f(imm->pool->pool());
    if (def && def->pool) f(def->pool->pool());
    if (svm && svm->pool) f(svm->pool->pool());
    if (pin && pin->pool) f(pin->pool->pool());
  }

  // The mockcl id of live allocation i's block.
  std::uint64_t block_id(std::size_t i) const {
    mockcl::controller& c = mockcl::control();
    if (imm) return c.object_id(imm->live[i].mem());
    if (def) return c.object_id(def->live[i].mem());
    if (svm) return c.object_id(svm->live[i].ptr());
    return c.object_id(pin->live[i].mem());
  }

  void check_pool() const {
    with_core([&](const auto& p) {
      expect_counters_and_statistics(
          p.counters(), p.statistics(),
          pool_counters{m.held_blocks, m.live.size(), m.held_bytes, m.active_bytes,
                        m.active_rounded, m.managed(), m.limit},
          m.stats,  // its reclaim_calls stays 0: this fuzzer registers no reclaim callback
          [this](const char* what, std::uint64_t got, std::uint64_t want) {
            expect_eq(what, got, want);
          });
      expect_eq("is_holding()", p.is_holding(), m.holding);
      if (!p.state_is_valid()) fail("state_is_valid() is false");
    });
    expect_eq("live allocations", live_count(), m.live.size());
    for (std::size_t i = 0; i < m.live.size(); ++i) {
      expect_eq("live[" + std::to_string(i) + "] block id", block_id(i), m.live[i].id);
    }
  }

  // The device's side, from one snapshot.
  void check_device(bool final) {
    const mockcl::accounting_snapshot s = mockcl::control().snapshot();
    const mockcl::device_stats& d = s.devices.at(0);
    // Real frees since the last step: which blocks, and the bytes credited.
    std::vector<std::uint64_t> freed;
    for (; frees_seen < s.frees.size(); ++frees_seen) {
      const mockcl::free_record& f = s.frees[frees_seen];
      auto it = m.blocks.find(f.id);
      if (it == m.blocks.end() && m.transient_frees > 0) {
        --m.transient_frees;  // the buffer of a failed allocator call
        continue;
      }
      if (it == m.blocks.end()) {
        fail("mockcl freed " + f.kind + " #" + std::to_string(f.id) +
             ", which is not a block the pool holds");
      }
      if (it->second.live)
        fail("mockcl freed the block of a live allocation (#" + std::to_string(f.id) + ")");
      const bool pinned = kind == pool_kind::pinned;
      const std::uint64_t credited = it->second.charged && !pinned ? it->second.rounded : 0;
      if (!pinned)
        expect_eq("bytes credited by the free of #" + std::to_string(f.id), f.size, credited);
      if (it->second.charged && !m.charges_at_creation()) m.credit(it->second.rounded, pinned);
      freed.push_back(it->second.rounded);
      m.blocks.erase(it);
    }
    std::sort(freed.begin(), freed.end());
    std::sort(m.freed_sizes.begin(), m.freed_sizes.end());
    if (freed != m.freed_sizes) {
      std::string a, b;
      for (auto x : freed) a += " " + std::to_string(x);
      for (auto x : m.freed_sizes) b += " " + std::to_string(x);
      fail("blocks really freed at mockcl (sizes:" + a +
           ") are not those the model freed (sizes:" + b + ")");
    }
    m.freed_sizes.clear();
    expect_eq("buffers made and released by failed allocator calls, not yet freed at mockcl",
              m.transient_frees, 0);
    expect_eq("device outstanding bytes", d.outstanding, m.charged);
    expect_eq("device pinned outstanding bytes", d.pinned_outstanding, m.pinned_charged);
    if (m.charges_at_creation() && !final) {
      expect_eq(kind == pool_kind::pinned ? "pinned outstanding == pool managed bytes"
                                          : "device outstanding == pool managed bytes",
                kind == pool_kind::pinned ? d.pinned_outstanding : d.outstanding, m.managed());
    }
    expect_eq("blocks alive at mockcl", m.blocks.size(), m.held_blocks + m.live.size());
    auto live = [&](const char* k) {
      auto it = s.live.find(k);
      return it == s.live.end() ? std::uint64_t{0} : it->second;
    };
    expect_eq(is_svm(kind) ? "live svm blocks" : "live mem objects",
              live(is_svm(kind) ? "svm" : "mem"), m.blocks.size());
    for (int e = 0; e < e_count; ++e) {
      auto it = s.calls.find(kEntryNames[e]);
      expect_eq(std::string("calls of ") + kEntryNames[e], it == s.calls.end() ? 0 : it->second,
                m.calls[e]);
    }
    expect_eq("faults fired", s.faults_fired, m.faults_fired);
    expect_eq("use_after_release reports", s.reports.use_after_release, 0);
    expect_eq("double_release reports", s.reports.double_release, 0);
    expect_eq("leaked_at_context_release reports", s.reports.leaked_at_context_release, 0);
    for (const mockcl::command_record& c : s.commands) {
      // Only injected execution faults may fail a command.
      if (c.status != 0 && s.faults_fired == 0) {
        fail("command " + std::to_string(c.id) + " (" + c.kind + ") failed with " +
             std::to_string(c.status) + " and no fault was injected");
      }
    }
  }

  // ---- operations ----

  void do_allocate(op& o) {
    const std::uint64_t size = o.a;
    const std::uint64_t r = size == 0 ? 0 : m.block_of(size);
    const std::uint64_t active_before = m.active_rounded;
    const std::uint64_t held_before = m.held_bytes;
    const std::uint64_t managed_before = m.managed();
    const std::uint64_t limit = m.limit;
    int want_status = 0;
    bool fault = false, hit = false;
    const std::string want = m.allocate(size, want_status, fault, hit);
    o.result =
        want == "cl_error" ? "cl_error(" + std::string(status_name(want_status)) + ")" : want;
    std::string got;
    int got_status = 0;
    std::optional<oom_report> report;
    std::uint64_t id = 0;
    try {
      auto take = [&](auto& box) {
        auto a = box.pool->allocate(size);
        if (size == 0) {
          if (a.has_block()) fail("a zero-byte allocation has a block");
          got = "empty";
          return;
        }
        if (!a.has_block() || a.size() != size)
          fail("the new allocation has no block or the wrong size");
        box.live.push_back(std::move(a));
        id = block_id(box.live.size() - 1);
        got = "ok";
      };
      if (imm) take(*imm);
      if (def) take(*def);
      if (svm) take(*svm);
      if (pin) take(*pin);
    } catch (const out_of_memory& e) {
      got = "out_of_memory";
      report = e.report();
    } catch (const cl_error& e) {
      got = "cl_error";
      got_status = e.status();
    } catch (const argument_error&) {
      got = "argument_error";
    } catch (const std::exception& e) {
      fail(std::string("allocate threw an unexpected exception: ") + e.what());
    }
    const bool ok_wanted = want == "hit" || want == "miss";
    if ((ok_wanted ? std::string("ok") : want) != got) {
      fail("allocate gave " +
           (got == "cl_error" ? "cl_error(" + std::string(status_name(got_status)) + ")" : got) +
           ", the model expected " + o.result);
    }
    if (got == "cl_error") {
      expect_eq("cl_error status", static_cast<std::uint64_t>(got_status),
                static_cast<std::uint64_t>(want_status));
      // A hopeless request (above max alloc) is refused, never paid for with held memory.
      const std::uint64_t room = limit > managed_before ? limit - managed_before : 0;
      if (want_status == CL_INVALID_BUFFER_SIZE && !fault && r <= room &&
          m.held_bytes != held_before) {
        fail("CL_INVALID_BUFFER_SIZE freed held memory");
      }
    }
    if (ok_wanted) {
      if (hit) {
        auto it = m.blocks.find(id);
        if (it == m.blocks.end() || it->second.live || it->second.rounded != r) {
          fail("a hit returned block #" + std::to_string(id) + ", which is not a held block of " +
               std::to_string(r) + " bytes");
        }
      } else {
        if (m.blocks.count(id) != 0)
          fail("a miss returned block #" + std::to_string(id) + ", which the pool already had");
        m.blocks[id] = block_info{r, m.charges_at_creation(), false};
      }
      m.blocks[id].live = true;
      m.activate(size, r, id, hit);
    }
    if (report) {
      expect_eq("oom_report.requested_bytes", report->requested_bytes, size);
      expect_eq("oom_report.rounded_bytes", report->rounded_bytes, r);
      expect_eq("oom_report.held_bytes", report->held_bytes, m.held_bytes);
      expect_eq("oom_report.active_rounded_bytes", report->active_rounded_bytes, m.active_rounded);
      if (report->cause != m.last_cause) fail("oom_report.cause differs from the model's");
      if (report->cause == oom_cause::allocator) {
        expect_eq("oom_report.allocator_status",
                  static_cast<std::uint64_t>(report->allocator_status),
                  static_cast<std::uint64_t>(m.last_allocator_status));
      }
      // The guarantee, independently of the model: with the device charging at creation and no
      // injected fault, out_of_memory only when the request cannot fit with nothing held.
      if (!fault && m.charges_at_creation()) {
        const std::uint64_t cap = kind == pool_kind::pinned ? dev.pinned : dev.capacity;
        const bool fits = r <= kMax - active_before && active_before + r <= std::min(cap, limit);
        if (fits) fail("out_of_memory although the request fits once nothing is held");
      }
    }
  }

  void do_release(op& o) {
    const std::size_t i = static_cast<std::size_t>(o.a);
    const bool discard = o.kind == op_kind::discard;
    const bool kept = !discard && m.holding && !m.unpooled(m.live[i].size);
    m.release(i, discard);
    auto drop = [&](auto& box) {
      if constexpr (requires { box.live[i].discard(); }) {
        if (discard) {
          box.live[i].discard();
        } else {
          box.live[i].release();
        }
      } else {
        box.live[i].release();  // pinned memory has no discard(): never decoded for it
      }
      box.live.erase(box.live.begin() + static_cast<std::ptrdiff_t>(i));
    };
    if (imm) drop(*imm);
    if (def) drop(*def);
    if (svm) drop(*svm);
    if (pin) drop(*pin);
    o.result = kept ? "held" : "freed";
  }

  void do_use(op& o, bool kernel) {
    const std::size_t i = static_cast<std::size_t>(o.a);
    const live_alloc& a = m.live[i];
    block_info& b = m.blocks[a.id];
    const unsigned char pattern = 0x5a;
    cl_command_queue q = w->queue(0);
    const cl_icd_dispatch* d = w->d;
    int want = 0;
    bool charge = false;
    // A block not charged yet (a deferred buffer, or an SVM block on a device that charges SVM at
    // first use) is charged by this enqueue, which fails with the device's status if it does not
    // fit; an injected fault of the call comes first.
    const int e = kernel ? e_kernel : is_svm(kind) ? e_svm_fill : e_fill;
    want = m.call(e);
    if (want == 0 && !b.charged) {
      want = m.charge(a.rounded, false);
      charge = want == 0;
    }
    if (want == 0) m.executes(e);
    cl_int got = CL_SUCCESS;
    if (is_svm(kind)) {
      void* p = svm->live[i].ptr();
      if (kernel) {
        if (d->clSetKernelArgSVMPointer(w->kernel, 0, p) != CL_SUCCESS)
          fail("clSetKernelArgSVMPointer failed");
        const size_t global = 1;
        got = d->clEnqueueNDRangeKernel(q, w->kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                        nullptr);
      } else {
        got = d->clEnqueueSVMMemFill(q, p, &pattern, 1, 1, 0, nullptr, nullptr);
      }
    } else {
      cl_mem mem = imm ? imm->live[i].mem() : def->live[i].mem();
      if (kernel) {
        if (d->clSetKernelArg(w->kernel, 0, sizeof(cl_mem), &mem) != CL_SUCCESS)
          fail("clSetKernelArg failed");
        const size_t global = 1;
        got = d->clEnqueueNDRangeKernel(q, w->kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                        nullptr);
      } else {
        got = d->clEnqueueFillBuffer(q, mem, &pattern, 1, 0, 1, 0, nullptr, nullptr);
      }
    }
    if (charge) b.charged = true;
    o.result = want == 0 ? "enqueued" : status_name(want);
    if (got != want) {
      fail(std::string("the use returned ") + status_name(got) + ", the model expected " +
           status_name(want));
    }
  }

  void execute(op& o) {
    switch (o.kind) {
      case op_kind::allocate:
        do_allocate(o);
        break;
      case op_kind::release:
      case op_kind::discard:
        do_release(o);
        break;
      case op_kind::free_held:
        m.free_largest(kMax, false);
        with_mut_core([](auto& p) { p.free_held(); });
        break;
      case op_kind::stop_holding:
        m.holding = false;
        m.free_largest(kMax, false);
        with_mut_core([](auto& p) { p.stop_holding(); });
        break;
      case op_kind::set_limit: {
        const bool want = m.set_limit(o.a);
        bool got = true;
        with_mut_core([&](auto& p) {
          try {
            p.set_limit(o.a);
          } catch (const argument_error&) {
            got = false;
          }
        });
        o.result = want ? "ok" : "argument_error";
        if (got != want) fail("set_limit disagrees");
        break;
      }
      case op_kind::trim: {
        const std::uint64_t want =
            m.held_bytes > o.a ? m.free_largest(m.held_bytes - o.a, true) : 0;
        std::uint64_t got = 0;
        with_mut_core([&](auto& p) { got = p.trim(o.a); });
        o.result = std::to_string(want) + " bytes freed";
        expect_eq("trim() result", got, want);
        break;
      }
      case op_kind::use_fill:
        do_use(o, false);
        break;
      case op_kind::use_kernel:
        do_use(o, true);
        break;
      case op_kind::finish: {
        const int want = m.call(e_finish);
        const cl_int got = w->d->clFinish(w->queue(0));
        o.result = status_name(want);
        if (got != want) fail(std::string("clFinish returned ") + status_name(got));
        break;
      }
      case op_kind::fault_nth:
      case op_kind::fault_exec: {
        const bool exec = o.kind == op_kind::fault_exec;
        const std::string rule = std::string(exec ? "exec:" : "nth:") + kEntryNames[o.b] + ":" +
                                 std::to_string(o.a) + ":" + std::to_string(o.status);
        const std::string err = mockcl::control().configure_faults(rule);
        if (!err.empty()) fail("configure_faults(" + rule + "): " + err);
        m.rule = fault_rule{true, exec, o.b, o.a, 0, o.status};
        break;
      }
    }
  }

  void teardown() {
    auto down = [&](auto& box) {
      if (pool_first) {
        box.pool.reset();
        box.live.clear();
      } else {
        box.live.clear();
        box.pool.reset();
      }
    };
    mockcl::control().configure_faults("");  // teardown paths cannot report errors
    m.rule.armed = false;
    if (imm) down(*imm);
    if (def) down(*def);
    if (svm) down(*svm);
    if (pin) down(*pin);
    w.reset();
    const mockcl::accounting_snapshot s = mockcl::control().snapshot();
    for (const auto& dstat : s.devices) {
      expect_eq("outstanding bytes at teardown", dstat.outstanding, 0);
      expect_eq("pinned outstanding bytes at teardown", dstat.pinned_outstanding, 0);
    }
    for (const auto& [k, n] : s.live) expect_eq("live mockcl " + k + " objects at teardown", n, 0);
    expect_eq("use_after_release reports", s.reports.use_after_release, 0);
    expect_eq("double_release reports", s.reports.double_release, 0);
    expect_eq("leaked_at_context_release reports", s.reports.leaked_at_context_release, 0);
  }
};

// ----------------------------------------------------------------------------------------------
// Decoding.

std::uint64_t consume_capacity(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 5)) {
    case 0:
      return 64ull << 10;
    case 1:
      return 1ull << 20;
    case 2:
      return 16ull << 20;
    case 3:
      return 256ull << 20;
    case 4:
      return in.ConsumeIntegralInRange<std::uint64_t>(1, 1 << 20);
    default:
      return in.ConsumeIntegralInRange<std::uint64_t>(1, 64ull << 20);
  }
}

std::uint64_t consume_size(FuzzedDataProvider& in, const model& m) {
  const std::uint64_t cap = m.kind == pool_kind::pinned ? m.dev.pinned : m.dev.capacity;
  switch (in.ConsumeIntegralInRange<unsigned>(0, 11)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
      return m.dev.max_alloc + in.ConsumeIntegralInRange<std::uint64_t>(0, 2) - 1;  // edge
    case 3:
      return m.dev.max_alloc + 1 + in.ConsumeIntegralInRange<std::uint64_t>(0, 1 << 20);
    case 4:
      return cap + in.ConsumeIntegralInRange<std::uint64_t>(0, 2) - 1;
    case 5:
      return kMax - in.ConsumeIntegralInRange<std::uint64_t>(0, 64);
    case 6: {
      const unsigned k = in.ConsumeIntegralInRange<unsigned>(0, 40);
      return (std::uint64_t{1} << k) + in.ConsumeIntegralInRange<std::uint64_t>(0, 2) - 1;
    }
    case 7:
    case 8:
      return in.ConsumeIntegralInRange<std::uint64_t>(1, cap / 2 + 1);
    default:
      return in.ConsumeIntegralInRange<std::uint64_t>(1, 4096);
  }
}

std::uint64_t consume_bytes(FuzzedDataProvider& in, const model& m) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 5)) {
    case 0:
      return unlimited;
    case 1:
      return 0;
    case 2:
      return m.active_rounded;
    case 3:
      return m.managed();
    default:
      return in.ConsumeIntegralInRange<std::uint64_t>(0, m.managed() + 4096);
  }
}

int consume_status(FuzzedDataProvider& in) {
  static const int kStatuses[] = {CL_MEM_OBJECT_ALLOCATION_FAILURE,
                                  CL_OUT_OF_RESOURCES,
                                  CL_OUT_OF_HOST_MEMORY,
                                  CL_INVALID_VALUE,
                                  CL_INVALID_OPERATION,
                                  CL_INVALID_BUFFER_SIZE,
                                  CL_DEVICE_NOT_AVAILABLE};
  return kStatuses[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kStatuses) - 1)];
}

// The entry points whose calls the model predicts, relevant to the pool kind.
int consume_entry(FuzzedDataProvider& in, pool_kind k, bool exec) {
  std::vector<int> es;
  switch (k) {
    case pool_kind::immediate:
      es = {e_create_buffer, e_migrate, e_fill, e_kernel, e_finish};
      break;
    case pool_kind::immediate_wait:
      es = {e_create_buffer, e_migrate, e_wait, e_fill, e_kernel, e_finish};
      break;
    case pool_kind::deferred:
      es = {e_create_buffer, e_fill, e_kernel, e_finish};
      break;
    case pool_kind::svm:
    case pool_kind::svm_free_queue:
      es = {e_svm_alloc, e_svm_fill, e_kernel, e_finish};
      break;
    case pool_kind::pinned:
      es = {e_create_buffer, e_map, e_finish};
      break;
  }
  if (exec) {  // commands only
    std::vector<int> cmds;
    for (int e : es) {
      if (e == e_migrate || e == e_fill || e == e_kernel || e == e_svm_fill) cmds.push_back(e);
    }
    es = cmds;
    if (es.empty()) return -1;
  }
  return es[in.ConsumeIntegralInRange<std::size_t>(0, es.size() - 1)];
}

}  // namespace
}  // namespace clpool::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clpool;
  using namespace clpool::fuzz;
  FuzzedDataProvider in(data, size);
  run r;
  r.kind = static_cast<pool_kind>(in.ConsumeIntegralInRange<unsigned>(0, 5));
  r.leading_bits = in.ConsumeIntegralInRange<unsigned>(0, 6);
  r.pool_first = in.ConsumeBool();
  mockcl::device_config& dev = r.dev;
  dev.name = "fuzz";
  const unsigned sem = in.ConsumeIntegralInRange<unsigned>(0, 2);
  dev.semantics = sem == 0   ? mockcl::alloc_semantics::immediate
                  : sem == 1 ? mockcl::alloc_semantics::deferred
                             : mockcl::alloc_semantics::host_oom;
  // Read only for an SVM pool on a deferred device (svm_oom_at = first_use needs one), so that
  // the inputs of every other configuration decode as before.
  dev.svm_first_use =
      is_svm(r.kind) && dev.semantics == mockcl::alloc_semantics::deferred && in.ConsumeBool();
  dev.capacity = consume_capacity(in);
  switch (in.ConsumeIntegralInRange<unsigned>(0, 3)) {
    case 0:
      dev.max_alloc = dev.capacity;
      break;
    case 1:
      dev.max_alloc = std::max<std::uint64_t>(1, dev.capacity / 4);
      break;
    case 2:
      dev.max_alloc = dev.capacity * 2;
      break;  // above capacity: OOM, not -61
    default:
      dev.max_alloc = in.ConsumeIntegralInRange<std::uint64_t>(1, 1 << 16);
      break;
  }
  dev.reported = std::max(dev.capacity, dev.max_alloc);
  dev.pinned = in.ConsumeBool() ? std::max<std::uint64_t>(1, dev.capacity / 4)
                                : in.ConsumeIntegralInRange<std::uint64_t>(1, 1 << 20);
  r.m.kind = r.kind;
  r.m.dev = dev;
  r.m.leading_bits = r.leading_bits;

  r.w = std::make_unique<mockcl_world>(
      [&](const std::string& why) { r.fail("mockcl setup: " + why); },
      std::vector<mockcl::device_config>{dev}, 1, "eager");
  {
    pool_options po;
    po.leading_bits = r.leading_bits;
    cl_command_queue q = r.w->queue(0);
    switch (r.kind) {
      case pool_kind::immediate:
      case pool_kind::immediate_wait:
        r.imm.emplace();
        r.imm->pool = std::make_unique<buffer_pool<immediate_buffer_allocator>>(
            immediate_buffer_allocator(
                q, {.wait_for_allocation = r.kind == pool_kind::immediate_wait}),
            buffer_pool_options{.pool = po});
        break;
      case pool_kind::deferred:
        r.def.emplace();
        r.def->pool = std::make_unique<buffer_pool<deferred_buffer_allocator>>(
            deferred_buffer_allocator(r.w->context), buffer_pool_options{.pool = po});
        break;
      case pool_kind::svm:
      case pool_kind::svm_free_queue:
        r.svm.emplace();
        r.svm->pool = std::make_unique<svm_pool>(
            svm_allocator(r.w->context, 0, CL_MEM_READ_WRITE,
                          r.kind == pool_kind::svm_free_queue ? q : nullptr),
            po);
        break;
      case pool_kind::pinned:
        r.pin.emplace();
        r.pin->pool = std::make_unique<host_pinned_pool>(host_pinned_allocator(q), po);
        break;
    }
  }
  // Calls made while setting up are not part of the model.
  const mockcl::accounting_snapshot s0 = mockcl::control().snapshot();
  for (int e = 0; e < e_count; ++e) {
    auto it = s0.calls.find(kEntryNames[e]);
    r.m.calls[e] = it == s0.calls.end() ? 0 : it->second;
  }
  r.check_pool();
  r.check_device(false);

  const bool trace = trace_mode();
  while (in.remaining_bytes() > 0 && r.ops.size() < kMaxOps) {
    op o;
    const unsigned pick = in.ConsumeIntegralInRange<unsigned>(0, 31);
    const std::size_t n = r.m.live.size();
    if (pick < 11 || (n == 0 && pick < 20)) {
      if (n >= kMaxLive) continue;
      o.kind = op_kind::allocate;
      o.a = consume_size(in, r.m);
    } else if (pick < 17) {
      o.kind = pick == 16 && r.kind != pool_kind::pinned ? op_kind::discard : op_kind::release;
      o.a = in.ConsumeIntegralInRange<std::size_t>(0, n - 1);
    } else if (pick < 20) {
      if (r.kind == pool_kind::pinned) continue;
      o.kind = pick == 19 ? op_kind::use_kernel : op_kind::use_fill;
      o.a = in.ConsumeIntegralInRange<std::size_t>(0, n - 1);
    } else if (pick < 21) {
      o.kind = op_kind::free_held;
    } else if (pick < 22) {
      o.kind = op_kind::stop_holding;
    } else if (pick < 24) {
      o.kind = op_kind::set_limit;
      o.a = consume_bytes(in, r.m);
    } else if (pick < 25) {
      o.kind = op_kind::trim;
      o.a = consume_bytes(in, r.m);
    } else if (pick < 26) {
      o.kind = op_kind::finish;
    } else {
      const bool exec = pick >= 30;
      o.kind = exec ? op_kind::fault_exec : op_kind::fault_nth;
      o.b = consume_entry(in, r.kind, exec);
      if (o.b < 0) continue;
      o.a = in.ConsumeIntegralInRange<std::uint64_t>(1, 3);
      o.status = consume_status(in);
    }
    r.ops.push_back(o);
    r.execute(r.ops.back());
    if (trace)
      std::fprintf(stderr, "pool_mockcl_fuzzer: #%zu %s\n", r.ops.size() - 1,
                   describe(r.ops.back()).c_str());
    r.check_pool();
    r.check_device(false);
  }
  r.teardown();
  return 0;
}
