// Fuzzer 1: memory_pool operations on a capacity-limited fake device, against a reference model.
//
// The input decodes (FuzzedDataProvider) into a pool configuration (leading_bits, device capacity,
// initial limit) and up to kMaxOps operations: allocate, through allocate() or try_allocate()
// (sizes include 0, 1, powers of two +- 1, values near 2^32, 2^63 and 2^64, and sizes relative to
// the capacity), release, a move-assign
// over a live allocation, free_held, stop_holding, set_limit, trim, set_trim_policy (ratios
// include NaN and infinities), a change of the device's capacity and an injected non-OOM
// allocator failure. The model (held blocks as rounded size -> count in a sorted fixed array, no
// heap allocation per step; free largest first worth the shortfall then everything on OOM, trim
// largest first to min(max_held_bytes, ratio * active_bytes)) predicts every step; after each one
// the fuzzer checks the pool's counters, statistics and held bins, the bytes and blocks
// outstanding at the device, every live allocation (held bins and live allocations on the schedule
// described at run::check), and the OOM guarantee: out_of_memory only when the request cannot fit
// even with nothing held, and success whenever it can. Teardown (pool first or allocations
// first) must return every byte. Any mismatch prints the configuration, the operations so far
// and what differed, then aborts.
//
// Speed (fuzz/README.md, "Measured figures"): fuzz/BUILD compiles this file with
// pool_ops_fuzzer_coverage_ignorelist.inc, so only the pool's code carries coverage; the model and
// checks avoid heap allocation per step, and failure messages are built only when failing.
//
// This fuzzer found that a request overflowing 64 bits only together with the HELD bytes was
// refused instead of freeing held memory (fixed; regressions/pool_ops/ keeps the input).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/pool_checks.h"
#include "pool/bins.h"
#include "pool/errors.h"
#include "pool/memory_pool.h"
#include "pool/pool_types.h"
#include "pool/testing/fake_allocator.h"

// The pool's always_inline entry points, called through out-of-line functions outside
// clpool::fuzz: coverage is decided per function after inlining, and the ignorelist
// (pool_ops_fuzzer_coverage_ignorelist.inc) leaves clpool::fuzz uninstrumented, so pool code
// inlined straight into the harness (the allocate fast path: locate, hit, pop) would carry no
// coverage. Inlined here, it does.
//
// The allocator: fake_allocator reports out-of-memory by value (allocator.h);
// CLPOOL_FUZZ_THROWING_ALLOCATOR (pool_ops_high_lb_fuzzer, fuzz/BUILD) fuzzes the seam's other
// form, where it throws allocator_out_of_memory.
namespace clpool::fuzz_sut {
#ifdef CLPOOL_FUZZ_THROWING_ALLOCATOR
using allocator_t = testing::throwing_fake_allocator;
#else
using allocator_t = testing::fake_allocator;
#endif
using pool_t = memory_pool<allocator_t>;
[[gnu::noinline]] pool_t::allocation allocate(pool_t& pool, std::uint64_t size) {
  return pool.allocate(size);
}
[[gnu::noinline]] std::optional<pool_t::allocation> try_allocate(pool_t& pool, std::uint64_t size,
                                                                 oom_report* report) {
  return pool.try_allocate(size, report);
}
}  // namespace clpool::fuzz_sut

namespace clpool::fuzz {
namespace {

using fuzz_sut::allocator_t;
using fuzz_sut::pool_t;
using testing::fake_device;
using testing::fake_device_error;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
// Operations per input: 128 here; pool_ops_deep_fuzzer (fuzz/BUILD) takes 512, enough to reach
// kMaxLive live allocations. pool_ops_fuzzer's own inputs are shorter still: its .options file
// caps them at 32 bytes (fuzz/README.md, "Measured figures", says why).
#ifndef CLPOOL_FUZZ_MAX_OPS
#define CLPOOL_FUZZ_MAX_OPS 128
#endif
constexpr std::size_t kMaxOps = CLPOOL_FUZZ_MAX_OPS;
constexpr std::size_t kMaxLive = 256;  // live allocations at once

// A pool's bins cost more at high leading_bits: each exponent used allocates a row of
// 2^leading_bits lists (96 KiB at 12), the bitmap is 2^leading_bits words (32 KiB at 12), and the
// checks' walks cover one bitmap word per 64 bins up to the highest bin used (4,032 words for a
// block near 2^63 at 12). So the range is split between two fuzzers built from this file
// (fuzz/BUILD): pool_ops_fuzzer takes leading_bits 0 to 8 from the input,
// pool_ops_high_lb_fuzzer 9 to 12, and the fast one is not slowed by the slow range.
#ifndef CLPOOL_FUZZ_MIN_LEADING_BITS
#define CLPOOL_FUZZ_MIN_LEADING_BITS 0
#endif
#ifndef CLPOOL_FUZZ_MAX_LEADING_BITS
#define CLPOOL_FUZZ_MAX_LEADING_BITS 8
#endif
constexpr unsigned kMinLeadingBits = CLPOOL_FUZZ_MIN_LEADING_BITS;
constexpr unsigned kMaxLeadingBits = CLPOOL_FUZZ_MAX_LEADING_BITS;
static_assert(kMinLeadingBits <= kMaxLeadingBits && kMaxLeadingBits <= max_leading_bits);

// CLPOOL_FUZZ_TRACE=1 prints every operation as it runs (to see what an input does).
bool trace_mode() {
  static const bool trace = [] {
    const char* v = std::getenv("CLPOOL_FUZZ_TRACE");
    return v != nullptr && v[0] != '\0' && v[0] != '0';
  }();
  return trace;
}

// ----------------------------------------------------------------------------------------------
// Operations, as decoded, and what happened. Kept compact; formatted only on failure.

enum class op_kind : std::uint8_t {
  allocate,
  release,
  move_assign,
  free_held,
  stop_holding,
  set_limit,
  trim,
  set_trim_policy,
  set_capacity,
  inject_failure,
  discard,
};

enum class outcome : std::uint8_t {
  none,
  ok,  // allocate: empty (size 0), hit or miss; others: done
  hit,
  miss,
  out_of_memory,
  argument_error,
  device_error,
};

const char* name_of(outcome o) {
  switch (o) {
    case outcome::none:
      return "-";
    case outcome::ok:
      return "ok";
    case outcome::hit:
      return "hit";
    case outcome::miss:
      return "miss";
    case outcome::out_of_memory:
      return "out_of_memory";
    case outcome::argument_error:
      return "argument_error";
    case outcome::device_error:
      return "fake_device_error";
  }
  return "?";
}

struct op {
  op_kind kind{};
  std::uint64_t a = 0;  // size, index, limit, target, max_held, capacity, failures
  std::uint64_t b = 0;  // second index; allocate: 1 for try_allocate(), 0 for allocate()
  double ratio = 0;
  outcome expected = outcome::none;
};

std::string describe(const op& o) {
  char buf[160];
  switch (o.kind) {
    case op_kind::allocate:
      std::snprintf(buf, sizeof buf, "%s(%llu)", o.b != 0 ? "try_allocate" : "allocate",
                    static_cast<unsigned long long>(o.a));
      break;
    case op_kind::release:
      std::snprintf(buf, sizeof buf, "live[%llu].release()", static_cast<unsigned long long>(o.a));
      break;
    case op_kind::discard:
      std::snprintf(buf, sizeof buf, "live[%llu].discard()", static_cast<unsigned long long>(o.a));
      break;
    case op_kind::move_assign:
      std::snprintf(buf, sizeof buf, "live[%llu] = std::move(live[%llu])",
                    static_cast<unsigned long long>(o.a), static_cast<unsigned long long>(o.b));
      break;
    case op_kind::free_held:
      std::snprintf(buf, sizeof buf, "free_held()");
      break;
    case op_kind::stop_holding:
      std::snprintf(buf, sizeof buf, "stop_holding()");
      break;
    case op_kind::set_limit:
      std::snprintf(buf, sizeof buf, "set_limit(%llu)", static_cast<unsigned long long>(o.a));
      break;
    case op_kind::trim:
      std::snprintf(buf, sizeof buf, "trim(%llu)", static_cast<unsigned long long>(o.a));
      break;
    case op_kind::set_trim_policy:
      std::snprintf(buf, sizeof buf, "set_trim_policy(max_held=%llu, ratio=%g)",
                    static_cast<unsigned long long>(o.a), o.ratio);
      break;
    case op_kind::set_capacity:
      std::snprintf(buf, sizeof buf, "device.set_capacity(%llu)",
                    static_cast<unsigned long long>(o.a));
      break;
    case op_kind::inject_failure:
      std::snprintf(buf, sizeof buf, "device.fail_next_allocations(%llu)",
                    static_cast<unsigned long long>(o.a));
      break;
  }
  return std::string(buf) + " -> expected " + name_of(o.expected);
}

// ----------------------------------------------------------------------------------------------
// The reference model.

struct live_block {
  std::uint64_t size;
  std::uint64_t rounded;
};

// The model's held blocks: (rounded size, blocks) pairs sorted by size, in a fixed array, so the
// model allocates nothing per step. Every held block was allocated by an `allocate` operation, so
// there are never more than kMaxOps distinct sizes.
class held_table {
 public:
  struct entry {
    std::uint64_t bytes;
    std::uint64_t blocks;
  };
  bool empty() const { return n_ == 0; }
  const entry* begin() const { return entries_; }
  const entry* end() const { return entries_ + n_; }
  std::size_t size() const { return n_; }

  // Adds one block of `bytes`.
  void add(std::uint64_t bytes) {
    std::size_t i = lower_bound(bytes);
    if (i < n_ && entries_[i].bytes == bytes) {
      ++entries_[i].blocks;
      return;
    }
    if (n_ == kMaxOps) {
      std::fprintf(stderr, "pool_ops_fuzzer: model held table full\n");
      std::abort();
    }
    std::memmove(entries_ + i + 1, entries_ + i, (n_ - i) * sizeof(entry));
    entries_[i] = {bytes, 1};
    ++n_;
  }

  // Removes one block of `bytes` if there is one.
  bool take(std::uint64_t bytes) {
    const std::size_t i = lower_bound(bytes);
    if (i == n_ || entries_[i].bytes != bytes) return false;
    if (--entries_[i].blocks == 0) {
      std::memmove(entries_ + i, entries_ + i + 1, (n_ - i - 1) * sizeof(entry));
      --n_;
    }
    return true;
  }

  // Removes one of the largest blocks and returns its size. Precondition: !empty().
  std::uint64_t take_largest() {
    entry& e = entries_[n_ - 1];
    const std::uint64_t bytes = e.bytes;
    if (--e.blocks == 0) --n_;
    return bytes;
  }

 private:
  std::size_t lower_bound(std::uint64_t bytes) const {
    std::size_t lo = 0, hi = n_;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (entries_[mid].bytes < bytes) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  entry entries_[kMaxOps];
  std::size_t n_ = 0;
};

struct model {
  unsigned leading_bits = default_leading_bits;
  std::uint64_t capacity = kMax;
  std::uint64_t limit = unlimited;
  bool holding = true;
  trim_policy trim;
  unsigned armed_failures = 0;
  held_table held;  // rounded block size -> blocks
  std::uint64_t held_bytes = 0;
  std::uint64_t held_blocks = 0;
  bin_id highest_bin_held = 0;   // the pool's bin table has at least this many entries
  std::vector<live_block> live;  // in the order the fuzzer keeps its allocations
  std::uint64_t active_bytes = 0;
  std::uint64_t active_rounded = 0;
  pool_statistics stats;
  // Of the last allocate that failed with out_of_memory.
  oom_cause last_cause = oom_cause::allocator;

  std::uint64_t managed() const { return active_rounded + held_bytes; }

  void hold(std::uint64_t rounded) {
    const bin_id bin = bin_number(rounded, leading_bits);
    if (bin > highest_bin_held) highest_bin_held = bin;
    held.add(rounded);
    ++held_blocks;
    held_bytes += rounded;
  }

  // Frees held blocks, largest first, until at least `target` bytes are freed.
  std::uint64_t free_largest(std::uint64_t target, bool is_trim) {
    std::uint64_t freed = 0;
    while (freed < target && !held.empty()) {
      const std::uint64_t bytes = held.take_largest();
      --held_blocks;
      held_bytes -= bytes;
      freed += bytes;
      ++stats.allocator_frees;
      if (is_trim) {
        ++stats.blocks_trimmed;
        stats.bytes_trimmed += bytes;
      }
    }
    return freed;
  }

  std::uint64_t budget() const {
    std::uint64_t b = trim.max_held_bytes;
    if (trim.max_held_to_active_ratio >= 0.0) {
      const long double r = static_cast<long double>(trim.max_held_to_active_ratio) * active_bytes;
      if (r < static_cast<long double>(b)) b = static_cast<std::uint64_t>(r);
    }
    return b;
  }

  void apply_trim_policy() {
    if (trim.enabled()) {
      const std::uint64_t b = budget();
      if (held_bytes > b) free_largest(held_bytes - b, /*is_trim=*/true);
    }
  }

  void activate(std::uint64_t size, std::uint64_t rounded, bool hit) {
    live.push_back({size, rounded});
    active_bytes += size;
    active_rounded += rounded;
    if (active_bytes > stats.peak_active_bytes) stats.peak_active_bytes = active_bytes;
    ++(hit ? stats.hits : stats.misses);
  }

  outcome allocate(std::uint64_t size) {
    if (size == 0) return outcome::ok;
    const std::uint64_t rounded = rounded_size(size, leading_bits);
    if (held.take(rounded)) {
      --held_blocks;
      held_bytes -= rounded;
      activate(size, rounded, /*hit=*/true);
      return outcome::hit;
    }
    for (unsigned step = 0;; ++step) {
      // One attempt (the request's bin is empty and freeing never fills it).
      const std::uint64_t m = managed();
      if (rounded > kMax - active_rounded) {
        // Cannot fit even with nothing held: refused, nothing freed.
        return outcome::argument_error;
      }
      // The 64-bit range acts as the limit when there is none: held bytes in the way are a
      // shortfall like any other.
      const std::uint64_t room = m < limit ? limit - m : 0;
      std::uint64_t deficit = 0;
      if (rounded > room) {
        deficit = rounded - room;
        last_cause = oom_cause::limit;
      } else {
        if (armed_failures > 0) {
          --armed_failures;
          return outcome::device_error;
        }
        if (rounded > capacity || m > capacity - rounded) {
          ++stats.allocator_failures;
          deficit = rounded;
          last_cause = oom_cause::allocator;
        } else {
          ++stats.allocator_allocations;
          activate(size, rounded, /*hit=*/false);
          // Peak managed counts blocks that exist, so only successful misses raise it.
          if (managed() > stats.peak_managed_bytes) stats.peak_managed_bytes = managed();
          return outcome::miss;
        }
      }
      // Out of room: step 0 frees held blocks worth the deficit, step 1 everything; no reclaim
      // callbacks are registered, so after that the request fails.
      for (;; ++step) {
        if (step == 0 && free_largest(deficit, false) != 0) break;
        if (step == 1 && free_largest(kMax, false) != 0) break;
        if (step >= 2) {
          ++stats.ooms_raised;
          return outcome::out_of_memory;
        }
      }
      ++stats.oom_retries;
    }
  }

  // Gives back the block of a live allocation that is no longer in `live`; with `discard`, to the
  // allocator whether or not the pool holds (pooled_allocation::discard).
  void give_back(live_block b, bool discard = false) {
    active_bytes -= b.size;
    active_rounded -= b.rounded;
    if (!holding || discard) {
      ++stats.allocator_frees;
      return;
    }
    hold(b.rounded);
    apply_trim_policy();
  }

  void release(std::size_t index, bool discard = false) {
    const live_block b = live[index];
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(index));
    give_back(b, discard);
  }

  // live[to] = std::move(live[from]): to's block goes back, from's moves into slot `to`, and the
  // moved-from allocation (now empty) is dropped from the list.
  void move_assign(std::size_t to, std::size_t from) {
    const live_block old = live[to];
    live[to] = live[from];
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(from));
    give_back(old);
  }

  outcome set_limit(std::uint64_t new_limit) {
    if (new_limit < active_rounded) return outcome::argument_error;
    limit = new_limit;
    if (managed() > limit) free_largest(managed() - limit, false);
    return outcome::ok;
  }

  outcome set_trim_policy(const trim_policy& p) {
    if (!std::isfinite(p.max_held_to_active_ratio)) return outcome::argument_error;
    trim = p;
    apply_trim_policy();
    return outcome::ok;
  }

  std::uint64_t trim_to(std::uint64_t target) {
    return held_bytes > target ? free_largest(held_bytes - target, true) : 0;
  }
};

// ----------------------------------------------------------------------------------------------
// The run: decoding, the system under test, checks and the failure report.

struct run {
  unsigned leading_bits = 0;
  std::uint64_t initial_capacity = 0;
  std::uint64_t initial_limit = unlimited;
  std::vector<op> ops;
  model m;
  std::shared_ptr<fake_device> device;
  std::unique_ptr<pool_t> pool;
  std::vector<pool_t::allocation> live;
  bool tearing_down = false;  // for the report: checks after the operations, during teardown

  [[noreturn]] void fail(const std::string& what) const {
    std::fprintf(stderr,
                 "\n==== pool_ops_fuzzer: the pool disagrees with the model ====\n"
                 "config: leading_bits=%u capacity=%llu limit=%llu\n"
                 "operations (%zu):\n",
                 leading_bits, static_cast<unsigned long long>(initial_capacity),
                 static_cast<unsigned long long>(initial_limit), ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      std::fprintf(stderr, "  #%zu %s\n", i, describe(ops[i]).c_str());
    }
    std::fprintf(stderr, "%safter operation #%zu: %s\n", tearing_down ? "teardown, " : "",
                 ops.empty() ? 0 : ops.size() - 1, what.c_str());
    std::fflush(stderr);
    std::abort();
  }

  // Inlined compare; the message is built only on failure, out of line.
  [[gnu::always_inline]] void expect_eq(const char* what, std::uint64_t pool_value,
                                        std::uint64_t model_value) const {
    if (pool_value != model_value) [[unlikely]]
      fail_eq(what, pool_value, model_value);
  }

  [[noreturn, gnu::noinline, gnu::cold]] void fail_eq(const char* what, std::uint64_t pool_value,
                                                      std::uint64_t model_value) const {
    fail(std::string(what) + ": pool " + std::to_string(pool_value) + ", model " +
         std::to_string(model_value));
  }

  // Checks everything after operation `step` (or at the end, when `final`). Counters,
  // statistics, the device's outstanding bytes and blocks, and its error log are checked after
  // every step. held_bins() and state_is_valid() walk the bins marked in the pool's bitmap
  // (held_blocks.h): cheap while the highest bin ever used is small, so they run after every
  // step below kCheapWalkBins (64 bitmap words), every kWalkEvery steps below kHugeTableBins,
  // and otherwise only at the end. The live allocations (up to kMaxLive) are walked every
  // kWalkEvery steps and at the end: an operation changes at most two of them, and
  // do_allocate checks a new one at once, so walking them after every step would make a long
  // input cost O(ops * live) hash lookups for nothing.
  static constexpr bin_id kCheapWalkBins = 4096;
  static constexpr bin_id kHugeTableBins = 65536;
  static constexpr std::size_t kWalkEvery = 16;
  void check(std::size_t step, bool final = false) const {
    const bool periodic = final || step % kWalkEvery == 0;
    const bool walk = final || m.highest_bin_held < kCheapWalkBins ||
                      (m.highest_bin_held < kHugeTableBins && periodic);
    if (pool) {
      const pool_counters c = pool->counters();
      expect_counters_and_statistics(
          c, pool->statistics(),
          pool_counters{m.held_blocks, m.live.size(), m.held_bytes, m.active_bytes,
                        m.active_rounded, m.managed(), m.limit},
          m.stats,  // its reclaim_calls stays 0: this fuzzer registers no reclaim callback
          [this](const char* what, std::uint64_t got, std::uint64_t want) {
            expect_eq(what, got, want);
          });
      if (c.managed_bytes > c.limit_bytes) fail("managed_bytes above the limit");
      expect_eq("is_holding()", pool->is_holding(), m.holding);
      const trim_policy t = pool->get_trim_policy();
      expect_eq("trim_policy.max_held_bytes", t.max_held_bytes, m.trim.max_held_bytes);
      if (std::memcmp(&t.max_held_to_active_ratio, &m.trim.max_held_to_active_ratio,
                      sizeof(double)) != 0) {
        fail("trim_policy.max_held_to_active_ratio differs");
      }
      if (walk) {
        // for_each_held_bin allocates nothing; the visitor runs under the pool's lock and only
        // compares (fail() prints and aborts without touching the pool).
        const held_table::entry* expected = m.held.begin();
        pool->for_each_held_bin([&](const held_bin_summary& bin) {
          if (expected == m.held.end() || bin.block_bytes != expected->bytes ||
              bin.blocks != expected->blocks) {
            fail("held bins: pool holds " + std::to_string(bin.blocks) + " x " +
                 std::to_string(bin.block_bytes) + " bytes where the model " +
                 (expected == m.held.end() ? std::string("holds nothing more")
                                           : "holds " + std::to_string(expected->blocks) + " x " +
                                                 std::to_string(expected->bytes)));
          }
          if (bin.block_bytes != alloc_size(bin.bin, leading_bits)) {
            fail("held bin with wrong size");
          }
          ++expected;
        });
        if (expected != m.held.end()) fail("held bins: the model holds bins the pool does not");
      }
      if (walk && !pool->state_is_valid()) fail("state_is_valid() is false");
    }
    // What the device has outstanding is exactly what the pool manages.
    expect_eq("device.outstanding_bytes", device->outstanding_bytes(), m.managed());
    expect_eq("device.outstanding_blocks", device->outstanding_blocks(),
              m.held_blocks + m.live.size());
    if (device->error_count() != 0) fail("device error: " + device->errors().front());
    expect_eq("live allocations", live.size(), m.live.size());
    if (!periodic) return;
    for (std::size_t i = 0; i < live.size(); ++i) {
      if (live[i].size() != m.live[i].size || live[i].rounded_size() != m.live[i].rounded ||
          !live[i].has_block() || !device->is_outstanding(live[i].handle())) {
        fail("live[" + std::to_string(i) + "]: size " + std::to_string(live[i].size()) +
             " rounded " + std::to_string(live[i].rounded_size()) + ", model size " +
             std::to_string(m.live[i].size) + " rounded " + std::to_string(m.live[i].rounded));
      }
    }
  }

  // allocate() or, when o.b != 0, try_allocate(): the same model outcome either way; an
  // out-of-memory arrives as an exception with its report, or as std::nullopt with the report
  // filled in place.
  void do_allocate(op& o) {
    const std::uint64_t size = o.a;
    const std::uint64_t rounded = rounded_size(size, leading_bits);
    const std::uint64_t active_rounded_before = m.active_rounded;
    const std::uint64_t capacity = m.capacity;
    const std::uint64_t limit = m.limit;
    const bool armed = m.armed_failures > 0;
    o.expected = m.allocate(size);
    outcome got = outcome::none;
    try {
      if (o.b != 0) {
        oom_report report;
        std::optional<pool_t::allocation> a = fuzz_sut::try_allocate(*pool, size, &report);
        if (!a) {
          check_allocate_outcome(o, outcome::out_of_memory, size, rounded, active_rounded_before,
                                 capacity, limit, armed, &report);
          return;
        }
        keep_new_allocation(std::move(*a), size, rounded);
      } else {
        keep_new_allocation(fuzz_sut::allocate(*pool, size), size, rounded);
      }
      got = outcome::ok;
    } catch (const out_of_memory& e) {
      if (o.b != 0) fail("try_allocate threw out_of_memory");
      check_allocate_outcome(o, outcome::out_of_memory, size, rounded, active_rounded_before,
                             capacity, limit, armed, &e.report());
      return;
    } catch (const argument_error&) {
      got = outcome::argument_error;
    } catch (const fake_device_error&) {
      got = outcome::device_error;
    }
    check_allocate_outcome(o, got, size, rounded, active_rounded_before, capacity, limit, armed,
                           nullptr);
  }

  // Checks a successful allocation and keeps it in `live` (a zero-byte one has no block).
  void keep_new_allocation(pool_t::allocation a, std::uint64_t size, std::uint64_t rounded) {
    if (size != 0) {
      if (!a.has_block() || a.size() != size || a.rounded_size() != rounded ||
          !device->is_outstanding(a.handle())) {
        fail(
            "the new allocation has no block, the wrong size or a block the device does not "
            "know");
      }
      live.push_back(std::move(a));
    } else if (a.has_block()) {
      fail("zero-byte allocation has a block");
    }
  }

  void check_allocate_outcome(const op& o, outcome got, std::uint64_t size, std::uint64_t rounded,
                              std::uint64_t active_rounded_before, std::uint64_t capacity,
                              std::uint64_t limit, bool armed, const oom_report* report) const {
    const outcome want =
        (o.expected == outcome::hit || o.expected == outcome::miss) ? outcome::ok : o.expected;
    if (got != want) {
      fail(std::string("allocate returned ") + name_of(got) + ", the model expected " +
           name_of(o.expected));
    }
    // The OOM guarantee, independently of the model's bookkeeping.
    const bool fits = rounded <= kMax - active_rounded_before &&
                      active_rounded_before + rounded <= std::min(capacity, limit);
    if (got == outcome::out_of_memory && fits) {
      fail("out_of_memory although the request fits once nothing is held");
    }
    if (size != 0 && fits && !armed && got != outcome::ok) {
      fail("a request that fits once nothing is held did not succeed");
    }
    if (report) {
      expect_eq("oom_report.requested_bytes", report->requested_bytes, size);
      expect_eq("oom_report.rounded_bytes", report->rounded_bytes, rounded);
      expect_eq("oom_report.active_bytes", report->active_bytes, m.active_bytes);
      expect_eq("oom_report.active_rounded_bytes", report->active_rounded_bytes, m.active_rounded);
      expect_eq("oom_report.held_bytes", report->held_bytes, m.held_bytes);
      expect_eq("oom_report.managed_bytes", report->managed_bytes, m.managed());
      expect_eq("oom_report.limit_bytes", report->limit_bytes, m.limit);
      if (report->held_bytes != 0) fail("out_of_memory while still holding memory");
      if (report->cause != m.last_cause) fail("oom_report.cause differs from the model's");
      if (report->cause == oom_cause::allocator &&
          report->allocator_status != testing::fake_oom_status) {
        fail("oom_report.allocator_status is not the device's");
      }
    }
  }

  void execute(op& o) {
    o.expected = outcome::ok;  // the operations that can fail set their own expectation
    switch (o.kind) {
      case op_kind::allocate:
        do_allocate(o);
        break;
      case op_kind::release:
      case op_kind::discard: {
        const std::size_t i = static_cast<std::size_t>(o.a);
        const bool discard = o.kind == op_kind::discard;
        m.release(i, discard);
        if (discard) {
          live[i].discard();
        } else {
          live[i].release();
        }
        live[i].release();  // a second release does nothing
        live[i].discard();  // nor a discard after it
        if (live[i].has_block()) fail("released allocation keeps a block");
        if (live[i].size() != 0 || live[i].rounded_size() != 0 || live[i].id() != 0)
          fail("released allocation keeps its block's size or id");
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        o.expected = outcome::ok;
        break;
      }
      case op_kind::move_assign: {
        const std::size_t to = static_cast<std::size_t>(o.a);
        const std::size_t from = static_cast<std::size_t>(o.b);
        m.move_assign(to, from);
        live[to] = std::move(live[from]);
        if (live[from].has_block()) fail("moved-from allocation keeps a block");
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(from));
        o.expected = outcome::ok;
        break;
      }
      case op_kind::free_held:
        m.free_largest(kMax, false);
        pool->free_held();
        o.expected = outcome::ok;
        break;
      case op_kind::stop_holding:
        m.holding = false;
        m.free_largest(kMax, false);
        pool->stop_holding();
        o.expected = outcome::ok;
        break;
      case op_kind::set_limit: {
        o.expected = m.set_limit(o.a);
        outcome got = outcome::ok;
        try {
          pool->set_limit(o.a);
        } catch (const argument_error&) {
          got = outcome::argument_error;
        }
        if (got != o.expected) fail(std::string("set_limit: ") + name_of(got));
        break;
      }
      case op_kind::trim: {
        const std::uint64_t want = m.trim_to(o.a);
        o.expected = outcome::ok;
        expect_eq("trim() result", pool->trim(o.a), want);
        break;
      }
      case op_kind::set_trim_policy: {
        const trim_policy p{o.a, o.ratio};
        o.expected = m.set_trim_policy(p);
        outcome got = outcome::ok;
        try {
          pool->set_trim_policy(p);
        } catch (const argument_error&) {
          got = outcome::argument_error;
        }
        if (got != o.expected) fail(std::string("set_trim_policy: ") + name_of(got));
        break;
      }
      case op_kind::set_capacity:
        m.capacity = o.a;
        device->set_capacity(o.a);
        o.expected = outcome::ok;
        break;
      case op_kind::inject_failure:
        m.armed_failures = static_cast<unsigned>(o.a);
        device->fail_next_allocations(static_cast<unsigned>(o.a));
        o.expected = outcome::ok;
        break;
    }
  }
};

// ----------------------------------------------------------------------------------------------
// Decoding.

// The run's vectors, kept from one input to the next with their full capacity, so that no step
// or input reallocates them. Made in LLVMFuzzerInitialize: memory an input allocates and does not
// free (a vector that grew and was kept) makes libFuzzer suspect a leak and run LeakSanitizer's
// whole-heap scan, and this way no input ever does.
struct spares {
  std::vector<op> ops;
  std::vector<pool_t::allocation> live;
  std::vector<live_block> model_live;

  static spares& get() {
    static spares* const instance = [] {
      auto* s = new spares;  // never freed: outlives every input, like libFuzzer itself
      s->ops.reserve(kMaxOps);
      s->live.reserve(kMaxLive);
      s->model_live.reserve(kMaxLive);
      return s;
    }();
    return *instance;
  }
};

std::uint64_t near(std::uint64_t center, FuzzedDataProvider& in) {
  const auto delta = in.ConsumeIntegralInRange<std::int64_t>(-64, 64);
  return center + static_cast<std::uint64_t>(delta);  // wraps modulo 2^64 by design
}

// A size: the edges the issue names, sizes relative to the device, and small sizes.
std::uint64_t consume_size(FuzzedDataProvider& in, std::uint64_t capacity) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 15)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2: {  // a power of two, -1, exact or +1
      const unsigned k = in.ConsumeIntegralInRange<unsigned>(0, 63);
      const int d = in.ConsumeIntegralInRange<int>(-1, 1);
      return (std::uint64_t{1} << k) + static_cast<std::uint64_t>(static_cast<std::int64_t>(d));
    }
    case 3:
      return near(std::uint64_t{1} << 32, in);
    case 4:
      return near(std::uint64_t{1} << 63, in);
    case 5:
      return kMax - in.ConsumeIntegralInRange<std::uint64_t>(0, 64);
    case 6:
      return in.ConsumeIntegral<std::uint64_t>();
    case 7:
    case 8:
    case 9: {  // log-uniform up to twice the capacity (or 2^40 on an unlimited device)
      const std::uint64_t top =
          capacity >= (std::uint64_t{1} << 40) ? std::uint64_t{1} << 41 : capacity * 2 + 1;
      const unsigned bits = in.ConsumeIntegralInRange<unsigned>(0, 63);
      const std::uint64_t v = in.ConsumeIntegral<std::uint64_t>();
      const std::uint64_t masked = bits == 63 ? v : v & ((std::uint64_t{1} << (bits + 1)) - 1);
      return top == 0 ? masked : masked % top;
    }
    default:
      return in.ConsumeIntegralInRange<std::uint64_t>(1, 4096);
  }
}

std::uint64_t consume_capacity(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 7)) {
    case 0:
      return unlimited;
    case 1:
      return near(std::uint64_t{1} << 32, in);
    case 2:
      return near(std::uint64_t{1} << 63, in);
    case 3:
      return in.ConsumeIntegral<std::uint64_t>();
    case 4:
      return std::uint64_t{1} << in.ConsumeIntegralInRange<unsigned>(0, 63);
    case 5:
      return in.ConsumeIntegralInRange<std::uint64_t>(0, 1 << 20);
    default:
      return in.ConsumeIntegralInRange<std::uint64_t>(0, 1 << 16);
  }
}

// A byte count for limits, trim targets and max_held: relative to what is managed now.
std::uint64_t consume_bytes(FuzzedDataProvider& in, const model& m) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 7)) {
    case 0:
      return unlimited;
    case 1:
      return 0;
    case 2:
      return m.active_rounded;
    case 3:
      return m.managed();
    case 4:
      return m.managed() + in.ConsumeIntegralInRange<std::uint64_t>(0, 4096);
    case 5:
      return in.ConsumeIntegral<std::uint64_t>();
    default: {
      const std::uint64_t top = m.managed() == 0 ? 4096 : m.managed();
      return in.ConsumeIntegralInRange<std::uint64_t>(0, top);
    }
  }
}

double consume_ratio(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 9)) {
    case 0:
      return -1.0;
    case 1:
      return 0.0;
    case 2:
      return 0.5;
    case 3:
      return 1.0;
    case 4:
      return 2.0;
    case 5:
      return std::numeric_limits<double>::quiet_NaN();
    case 6:
      return std::numeric_limits<double>::infinity();
    case 7:
      return -std::numeric_limits<double>::infinity();
    case 8:
      return std::numeric_limits<double>::max();
    default:
      return in.ConsumeFloatingPoint<double>();
  }
}

}  // namespace
}  // namespace clpool::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  clpool::fuzz::spares::get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clpool;
  using namespace clpool::fuzz;
  FuzzedDataProvider in(data, size);
  run r;
  // The run's vectors keep their capacity from one input to the next (moved in here, moved back
  // at the end), so steps and inputs do not reallocate them. Each is empty when put back.
  spares& spare = spares::get();
  r.ops.swap(spare.ops);
  r.live.swap(spare.live);
  r.m.live.swap(spare.model_live);
  r.ops.clear();
  r.leading_bits = in.ConsumeIntegralInRange<unsigned>(kMinLeadingBits, kMaxLeadingBits);
  r.initial_capacity = consume_capacity(in);
  r.initial_limit = in.ConsumeBool() ? unlimited : consume_capacity(in);
  r.m.leading_bits = r.leading_bits;
  r.m.capacity = r.initial_capacity;
  r.m.limit = r.initial_limit;
  r.device = std::make_shared<fake_device>(r.initial_capacity);
  r.pool = std::make_unique<pool_t>(
      allocator_t{r.device},
      pool_options{.leading_bits = r.leading_bits, .limit_bytes = r.initial_limit});
  r.check(0, /*final=*/true);
  if (trace_mode()) {
    std::fprintf(stderr, "pool_ops_fuzzer: leading_bits=%u capacity=%llu limit=%llu\n",
                 r.leading_bits, static_cast<unsigned long long>(r.initial_capacity),
                 static_cast<unsigned long long>(r.initial_limit));
  }

  while (in.remaining_bytes() > 0 && r.ops.size() < kMaxOps) {
    op o;
    // Allocate and release dominate, so pools fill up and hold many bins.
    const unsigned pick = in.ConsumeIntegralInRange<unsigned>(0, 31);
    if (pick < 12) {
      o.kind = op_kind::allocate;
    } else if (pick < 20) {
      o.kind = pick == 19 ? op_kind::discard : op_kind::release;  // one release in eight
    } else if (pick < 22) {
      o.kind = op_kind::move_assign;
    } else if (pick < 24) {
      o.kind = op_kind::free_held;
    } else if (pick < 25) {
      o.kind = op_kind::stop_holding;
    } else if (pick < 27) {
      o.kind = op_kind::set_limit;
    } else if (pick < 28) {
      o.kind = op_kind::trim;
    } else if (pick < 30) {
      o.kind = op_kind::set_trim_policy;
    } else if (pick < 31) {
      o.kind = op_kind::set_capacity;
    } else {
      o.kind = op_kind::inject_failure;
    }
    switch (o.kind) {
      case op_kind::allocate:
        if (r.live.size() >= kMaxLive) continue;
        // Five requests in six go through try_allocate(), one through allocate(): the two share
        // every step but the last, and an out_of_memory exception costs more than the rest of
        // the operation (fuzz/README.md, "Measured figures").
        o.b = pick < 10 ? 1 : 0;
        o.a = consume_size(in, r.m.capacity);
        break;
      case op_kind::release:
      case op_kind::discard:
        if (r.live.empty()) continue;
        o.a = in.ConsumeIntegralInRange<std::size_t>(0, r.live.size() - 1);
        break;
      case op_kind::move_assign:
        if (r.live.size() < 2) continue;
        o.a = in.ConsumeIntegralInRange<std::size_t>(0, r.live.size() - 1);
        o.b = in.ConsumeIntegralInRange<std::size_t>(0, r.live.size() - 1);
        if (o.a == o.b) continue;
        break;
      case op_kind::set_limit:
      case op_kind::trim:
        o.a = consume_bytes(in, r.m);
        break;
      case op_kind::set_trim_policy:
        o.a = in.ConsumeBool() ? unlimited : consume_bytes(in, r.m);
        o.ratio = consume_ratio(in);
        break;
      case op_kind::set_capacity:
        o.a = in.ConsumeBool() ? consume_capacity(in) : consume_bytes(in, r.m);
        break;
      case op_kind::inject_failure:
        o.a = in.ConsumeIntegralInRange<unsigned>(0, 2);
        break;
      case op_kind::free_held:
      case op_kind::stop_holding:
        break;
    }
    r.ops.push_back(o);
    r.execute(r.ops.back());
    if (trace_mode()) {
      std::fprintf(stderr, "  #%zu %s\n", r.ops.size() - 1, describe(r.ops.back()).c_str());
    }
    r.check(r.ops.size());
  }
  r.check(r.ops.size(), /*final=*/true);

  // Teardown, in an order from the input: every byte goes back, nothing is freed twice.
  r.tearing_down = true;
  if (in.ConsumeBool()) {
    r.m.free_largest(kMax, false);
    r.m.holding = false;
    r.pool.reset();  // live allocations outlive the pool and free straight to the device
    r.check(r.ops.size(), /*final=*/true);
  }
  while (!r.live.empty()) {
    r.live.pop_back();
    r.m.give_back(r.m.live.back());
    r.m.live.pop_back();
    r.check(r.ops.size() + r.live.size());
  }
  r.pool.reset();
  if (r.device->outstanding_bytes() != 0 || r.device->outstanding_blocks() != 0) {
    r.fail("blocks outstanding at the device after teardown");
  }
  if (!r.device->errors().empty()) r.fail("device error: " + r.device->errors().front());
  r.ops.swap(spare.ops);
  r.live.swap(spare.live);  // empty: teardown released every allocation
  r.m.live.swap(spare.model_live);
  return 0;
}
