// The locks of sync/: one battery for both, then what is the biased lock's own.
#include "sync/biased_lock.h"
#include "sync/spin_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace clpool::detail {
using clpool::spin_lock;
namespace {

// The battery every lock of sync/ passes: exclusive with itself, exact under contention (one
// thread locking first, as the pool's owner does, then others arriving), handed over when its
// first thread exits.
template <class Lock>
class LockBattery : public ::testing::Test {};
using locks = ::testing::Types<spin_lock, biased_lock>;
TYPED_TEST_SUITE(LockBattery, locks);

TYPED_TEST(LockBattery, ExclusiveWithItself) {
  TypeParam lock;
  long counter = 0;
  for (int i = 0; i < 1000; ++i) {
    std::lock_guard<TypeParam> guard(lock);
    ++counter;
  }
  EXPECT_EQ(counter, 1000);
}

TYPED_TEST(LockBattery, MutualExclusionWhileOthersArrive) {
  // The main thread locks first (for the biased lock: takes the bias), then keeps locking while
  // other threads arrive (and revoke it).
  TypeParam lock;
  long counter = 0;  // deliberately non-atomic: the lock must make it exact
  {
    std::lock_guard<TypeParam> guard(lock);
    ++counter;
  }
  constexpr int kThreads = 4;
  constexpr int kIterations = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIterations; ++i) {
        std::lock_guard<TypeParam> guard(lock);
        ++counter;
      }
    });
  }
  for (int i = 0; i < kIterations; ++i) {
    std::lock_guard<TypeParam> guard(lock);
    ++counter;
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 1 + long{kThreads + 1} * kIterations);
}

TYPED_TEST(LockBattery, FirstThreadExitsAndAnotherTakesOver) {
  TypeParam lock;
  long counter = 0;
  std::thread([&] {
    std::lock_guard<TypeParam> guard(lock);
    ++counter;
  }).join();
  for (int i = 0; i < 100; ++i) {
    std::lock_guard<TypeParam> guard(lock);
    ++counter;
  }
  EXPECT_EQ(counter, 101);
}

TEST(SpinLock, TryLockFailsWhileHeld) {
  spin_lock lock;
  lock.lock();
  EXPECT_FALSE(lock.try_lock());
  lock.unlock();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

// The pool's hit path: try_lock_fast() with unlock_owner(), falling back to lock()/unlock() once
// the bias is gone. The other threads start only after the owner has taken the fast path a
// quarter of the time, so revocation lands while the owner is using it.
TEST(BiasedLock, FastPathOwnerAndOtherThreadsKeepMutualExclusion) {
  biased_lock lock;
  long counter = 0;                    // deliberately non-atomic
  ASSERT_FALSE(lock.try_lock_fast());  // nobody has taken the bias yet: not a fast-path case
  lock.lock();                         // takes the bias, where the process barrier exists
  ++counter;
  lock.unlock();
  const bool biased = process_barrier_available();
  constexpr int kThreads = 3;
  constexpr int kIterations = 20000;
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int i = 0; i < kIterations; ++i) {
        std::lock_guard<biased_lock> guard(lock);
        ++counter;
      }
    });
  }
  int fast = 0;
  for (int i = 0; i < kIterations; ++i) {
    if (i == kIterations / 4) go.store(true, std::memory_order_release);
    if (lock.try_lock_fast()) {
      ++fast;
      ++counter;
      lock.unlock_owner();
    } else {
      std::lock_guard<biased_lock> guard(lock);
      ++counter;
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 1 + long{kThreads + 1} * kIterations);
  // Before `go` nobody else locks, so every one of those took the fast path (with the barrier);
  // the other threads then revoked the bias for good.
  if (biased) {
    EXPECT_GE(fast, kIterations / 4);
  } else {
    EXPECT_EQ(fast, 0);
  }
  EXPECT_FALSE(lock.try_lock_fast());
}

}  // namespace
}  // namespace clpool::detail
