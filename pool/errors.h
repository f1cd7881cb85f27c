// The pool's typed exceptions. Every error a pool raises derives from pool_error, carries its
// context, and leaves the pool's state as it was before the failing call.
#ifndef CLPOOL_POOL_ERRORS_H_
#define CLPOOL_POOL_ERRORS_H_

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace clpool {

// "No limit" for byte limits and budgets.
inline constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

// Base of every exception the pool library throws itself.
class pool_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed a value the pool cannot accept (bad leading_bits, a limit below the active
// bytes, a size whose accounting would overflow 64 bits). Nothing was changed.
class argument_error : public pool_error {
 public:
  using pool_error::pool_error;
};

// Thrown BY ALLOCATORS to say "the device has no room for this block", as distinct from every
// other failure. The pool reacts by freeing held memory and retrying; any other exception from an
// allocator propagates unchanged. `status` is the backend's own code (an OpenCL status, say).
class allocator_out_of_memory : public pool_error {
 public:
  allocator_out_of_memory(int status, const std::string& message)
      : pool_error(message), status_(status) {}

  // The backend's status code, e.g. CL_MEM_OBJECT_ALLOCATION_FAILURE (-4).
  int status() const noexcept { return status_; }

 private:
  int status_;
};

// Why a request could not be satisfied.
enum class oom_cause : std::uint8_t {
  allocator,  // the allocator reported out-of-memory even after every retry
  limit,      // the pool's own limit left no room even after every retry
};

// What the pool knew when it gave up on a request. Byte figures are taken after the retries, so
// they show what was still in use when the request failed.
struct oom_report {
  std::uint64_t requested_bytes = 0;       // the size asked for
  std::uint64_t rounded_bytes = 0;         // the size of the block it needed (its bin's size)
  std::uint64_t active_bytes = 0;          // requested bytes in live allocations
  std::uint64_t active_rounded_bytes = 0;  // rounded bytes in live allocations
  std::uint64_t held_bytes = 0;            // bytes the pool still held
  std::uint64_t managed_bytes = 0;         // active rounded + held
  std::uint64_t limit_bytes = unlimited;   // the pool's limit, or `unlimited`
  oom_cause cause = oom_cause::allocator;
  int allocator_status = 0;       // the allocator's status, when cause == allocator
  std::string allocator_message;  // the allocator's message, when cause == allocator
};

// The pool could not satisfy a request after freeing held memory and calling every reclaim
// callback. Carries the full oom_report.
class out_of_memory : public pool_error {
 public:
  explicit out_of_memory(oom_report report);

  // The figures at the time of failure.
  const oom_report& report() const noexcept { return report_; }

 private:
  oom_report report_;
};

// Renders an oom_report as one line of text, the message of out_of_memory.
std::string describe(const oom_report& report);

}  // namespace clpool

#endif  // CLPOOL_POOL_ERRORS_H_
