// SpinLock: the runtime's lock. Critical sections are a few dozen instructions, so an
// uncontended atomic exchange beats a futex-based mutex on the create+release hot path;
// under contention it yields the CPU rather than burning it.
#ifndef MOCKCL_SPIN_LOCK_H_
#define MOCKCL_SPIN_LOCK_H_

#include <atomic>
#include <thread>

namespace mockcl {

// Satisfies Lockable (usable with std::unique_lock and std::condition_variable_any).
class SpinLock {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  bool try_lock() { return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace mockcl

#endif  // MOCKCL_SPIN_LOCK_H_
