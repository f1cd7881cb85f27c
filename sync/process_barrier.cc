#include "sync/process_barrier.h"

#include <atomic>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace clpool::detail {
namespace {

bool register_barrier() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
  const long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

// A full fence. GCC warns that ThreadSanitizer cannot model one (-Wtsan); under it biased_lock
// checks the same logic with a seq_cst exchange instead (biased_lock.h), so nothing TSan judges
// rests on this one.
void full_fence() noexcept {
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#pragma GCC diagnostic pop
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace

bool process_barrier_available() noexcept {
  static const bool available = register_barrier();  // thread-safe one-time registration
  return available;
}

void process_barrier() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
#endif
  // Unreachable when available() was true; a full fence keeps this thread's side correct anyway.
  full_fence();
}

}  // namespace clpool::detail
