#include "pool/errors.h"

#include <utility>

namespace clpool {

std::string describe(const oom_report& r) {
  std::string s = "out of memory: request of " + std::to_string(r.requested_bytes) +
                  " bytes (rounded to " + std::to_string(r.rounded_bytes) + ") failed";
  if (r.cause == oom_cause::limit) {
    s += " because the pool limit of " + std::to_string(r.limit_bytes) + " bytes was reached";
  } else {
    s += " in the allocator (status " + std::to_string(r.allocator_status);
    if (!r.allocator_message.empty()) s += ": " + r.allocator_message;
    s += ")";
  }
  s += "; active " + std::to_string(r.active_bytes) + " bytes (" +
       std::to_string(r.active_rounded_bytes) + " rounded), held " + std::to_string(r.held_bytes) +
       ", managed " + std::to_string(r.managed_bytes);
  if (r.limit_bytes != unlimited) s += ", limit " + std::to_string(r.limit_bytes);
  return s;
}

out_of_memory::out_of_memory(oom_report report)
    : pool_error(describe(report)), report_(std::move(report)) {}

}  // namespace clpool
