#include "pool/errors.h"

#include <cstdio>
#include <utility>

namespace clpool {

// Formatted with snprintf into a stack buffer and appended in a few pieces: this runs for every
// out_of_memory thrown, and building it from std::to_string temporaries cost a dozen heap
// allocations per exception (fuzz/README.md, pool_ops_fuzzer). Same text as before.
std::string describe(const oom_report& r) {
  using ull = unsigned long long;
  char buf[256];
  std::string s;
  s.reserve(200 + r.allocator_message.size());
  std::snprintf(buf, sizeof buf, "out of memory: request of %llu bytes (rounded to %llu) failed",
                static_cast<ull>(r.requested_bytes), static_cast<ull>(r.rounded_bytes));
  s += buf;
  if (r.cause == oom_cause::limit && !r.allocator_message.empty()) {
    // A limit the allocator enforces for several pools (pool/shared_limit.h).
    std::snprintf(buf, sizeof buf, " because the shared limit of %llu bytes was reached (",
                  static_cast<ull>(r.limit_bytes));
    s += buf;
    s += r.allocator_message;
    s += ")";
  } else if (r.cause == oom_cause::limit) {
    std::snprintf(buf, sizeof buf, " because the pool limit of %llu bytes was reached",
                  static_cast<ull>(r.limit_bytes));
    s += buf;
  } else {
    std::snprintf(buf, sizeof buf, " in the allocator (status %d", r.allocator_status);
    s += buf;
    if (!r.allocator_message.empty()) {
      s += ": ";
      s += r.allocator_message;
    }
    s += ")";
  }
  std::snprintf(buf, sizeof buf, "; active %llu %s (%llu rounded), held %llu, managed %llu",
                static_cast<ull>(r.active_bytes), r.active_bytes == 1 ? "byte" : "bytes",
                static_cast<ull>(r.active_rounded_bytes), static_cast<ull>(r.held_bytes),
                static_cast<ull>(r.managed_bytes));
  s += buf;
  if (r.limit_bytes != unlimited) {
    std::snprintf(buf, sizeof buf, ", limit %llu", static_cast<ull>(r.limit_bytes));
    s += buf;
  }
  return s;
}

out_of_memory::out_of_memory(oom_report report)
    : pool_error(describe(report)), report_(std::move(report)) {}

}  // namespace clpool
