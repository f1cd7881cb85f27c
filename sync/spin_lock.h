// A small lock for the pool's short critical sections.
//
// Why not std::mutex: a pool hit is a few loads and stores, and a pthread mutex costs two atomic
// read-modify-writes per lock/unlock pair (the unlock must check for waiters). This lock takes one
// exchange to lock and a plain release store to unlock, which halves the uncontended cost. Under
// contention it spins briefly, then yields the CPU, so oversubscribed threads still make progress.
#ifndef CLPOOL_SYNC_SPIN_LOCK_H_
#define CLPOOL_SYNC_SPIN_LOCK_H_

#include <atomic>
#include <thread>

namespace clpool {

// Meets the standard Lockable requirements, so std::lock_guard and std::unique_lock work with it.
// Not recursive: a thread that locks it twice deadlocks.
class spin_lock {
 public:
  spin_lock() = default;
  spin_lock(const spin_lock&) = delete;
  spin_lock& operator=(const spin_lock&) = delete;

  // Acquires the lock. Uncontended: one atomic exchange.
  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    lock_contended();
  }

  // Acquires the lock if it is free; never waits.
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }

  // Releases the lock. Precondition: this thread holds it.
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  // One CPU "pause" hint, for spin-wait loops elsewhere too.
  static void pause_once() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

 private:
  void lock_contended() noexcept {
    for (unsigned spins = 0;; ++spins) {
      // Wait on a plain load so the cache line stays shared while the holder works.
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < 64) {
          ++spins;
          pause_once();
        } else {
          std::this_thread::yield();
        }
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }

  std::atomic<bool> locked_{false};
};

}  // namespace clpool

#endif  // CLPOOL_SYNC_SPIN_LOCK_H_
