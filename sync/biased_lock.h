// A lock biased towards the first thread that takes it.
//
// Why: most pools are used by one thread, and on this project's reference machine two uncontended
// spin-lock acquisitions (one for allocate, one for release) cost ~18 ns, more than everything
// else on a pool hit. While only the bias owner locks, lock() and unlock() are plain stores and
// loads: no atomic read-modify-write at all. The first other thread to lock revokes the bias for
// good: it forces a barrier on every thread of the process (process_barrier.h, ~0.1 us), waits for
// the owner to leave its critical section, and from then on everyone uses an ordinary spin_lock.
//
// Correctness is the asymmetric Dekker pattern:
//   owner:   owner_inside = 1; (compiler fence)  read bias == me?  -> enter, else back off
//   revoker: bias = revoked;   process_barrier(); read owner_inside -> wait until 0
// process_barrier() gives the owner's side the full fence it skipped, so at least one of the two
// sees the other's write. Under ThreadSanitizer (which cannot see that barrier) the owner uses a
// seq_cst exchange instead, so the same logic is checked with fences TSan understands.
#ifndef CLPOOL_SYNC_BIASED_LOCK_H_
#define CLPOOL_SYNC_BIASED_LOCK_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "sync/process_barrier.h"
#include "sync/spin_lock.h"

#if defined(__SANITIZE_THREAD__)
#define CLPOOL_BIASED_LOCK_SEQ_CST 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CLPOOL_BIASED_LOCK_SEQ_CST 1
#endif
#endif

namespace clpool::detail {

// Meets the Lockable requirements. Not recursive.
class biased_lock {
 public:
  biased_lock() = default;
  biased_lock(const biased_lock&) = delete;
  biased_lock& operator=(const biased_lock&) = delete;

  // Acquires the lock. For the bias owner: a store and two loads, no read-modify-write.
  void lock() noexcept {
    const std::uintptr_t me = this_thread_token();
    if (bias_.load(std::memory_order_relaxed) == me && enter_as_owner(me)) [[likely]]
      return;
    lock_slow(me);
  }

  // Takes the lock only if that is the bias owner's fast path (no call, no read-modify-write);
  // returns false, holding nothing, otherwise. Lets hot callers keep the slow case out of line.
  bool try_lock_fast() noexcept {
    const std::uintptr_t me = this_thread_token();
    return bias_.load(std::memory_order_relaxed) == me && enter_as_owner(me);
  }

  // Releases the lock. Precondition: this thread holds it.
  void unlock() noexcept {
    if (held_shared_) [[unlikely]] {
      held_shared_ = false;
      shared_.unlock();
    } else {
      unlock_owner();
    }
  }

  // unlock() for a caller that took the lock through try_lock_fast() (so as the bias owner): one
  // store. Precondition: this thread holds the lock through try_lock_fast().
  void unlock_owner() noexcept { owner_inside_.store(0, std::memory_order_release); }

 private:
  static constexpr std::uintptr_t kUnbiased = 0;  // nobody has locked yet
  static constexpr std::uintptr_t kRevoked = 1;   // a second thread came: no bias ever again

  // A value unique to each live thread: the address of a thread-local byte (never 0 or 1).
  static std::uintptr_t this_thread_token() noexcept {
    // initial-exec: one segment-relative address computation, not a __tls_get_addr call.
    [[gnu::tls_model("initial-exec")]] static thread_local char token;
    return reinterpret_cast<std::uintptr_t>(&token);
  }

  // Not the owner (or not yet): take the bias if nobody has, else the shared lock.
  [[gnu::noinline]] void lock_slow(std::uintptr_t me) noexcept {
    std::uintptr_t bias = bias_.load(std::memory_order_relaxed);
    if (bias == kUnbiased && process_barrier_available()) {
      // First lock ever: try to become the owner (one CAS, once per lock).
      if (bias_.compare_exchange_strong(bias, me, std::memory_order_relaxed)) bias = me;
    }
    if (bias == me && enter_as_owner(me)) return;
    lock_shared(me);
  }

  bool enter_as_owner(std::uintptr_t me) noexcept {
#ifdef CLPOOL_BIASED_LOCK_SEQ_CST
    owner_inside_.exchange(1, std::memory_order_seq_cst);
    const bool still_owner = bias_.load(std::memory_order_seq_cst) == me;
#else
    owner_inside_.store(1, std::memory_order_relaxed);
    // Only the compiler must not reorder these; the revoker's process_barrier() orders the CPU.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const bool still_owner = bias_.load(std::memory_order_acquire) == me;
#endif
    if (still_owner) return true;
    owner_inside_.store(0, std::memory_order_release);  // revoked: back off to the shared lock
    return false;
  }

  void lock_shared(std::uintptr_t me) noexcept {
    shared_.lock();
    const std::uintptr_t previous = bias_.exchange(kRevoked, std::memory_order_seq_cst);
    if (previous != kUnbiased && previous != kRevoked && previous != me) {
      // Another thread may be inside as owner: make its "inside" store visible, then wait.
      process_barrier();
      // seq_cst, not acquire: under TSan (no process barrier) this load and the exchange above
      // must not be reordered, which only seq_cst guarantees in the C++ model; on x86 it is the
      // same plain load, and this path runs once per lock.
      for (unsigned spins = 0; owner_inside_.load(std::memory_order_seq_cst) != 0; ++spins) {
        if (spins < 64) {
          spin_lock::pause_once();
        } else {
          std::this_thread::yield();  // the owner may be descheduled mid-section
        }
      }
    }
    held_shared_ = true;
  }

  std::atomic<std::uintptr_t> bias_{kUnbiased};
  std::atomic<std::uint32_t> owner_inside_{0};
  // True while the lock is held through shared_, so that unlock() knows which to release. Written
  // only by the holder of shared_. An owner-mode hold always reads false: the first revoker
  // writes it only after waiting for the owner to leave, and every later shared holder comes
  // after the bias is gone for good, when no owner-mode hold can start. (The owner thread, too,
  // writes it once it falls back to the shared lock.) So the owner's fast path stores nothing but
  // owner_inside_.
  bool held_shared_ = false;
  spin_lock shared_;
};

}  // namespace clpool::detail

#endif  // CLPOOL_SYNC_BIASED_LOCK_H_
