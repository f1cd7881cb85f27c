#include "pool/biased_lock.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

namespace clpool::detail {
namespace {

TEST(BiasedLock, OwnerAloneIsExclusiveWithItself) {
  biased_lock lock;
  long counter = 0;
  for (int i = 0; i < 1000; ++i) {
    std::lock_guard<biased_lock> guard(lock);
    ++counter;
  }
  EXPECT_EQ(counter, 1000);
}

TEST(BiasedLock, RevocationKeepsMutualExclusion) {
  // The main thread biases the lock, then keeps locking while other threads arrive and revoke.
  biased_lock lock;
  long counter = 0;  // deliberately non-atomic
  {
    std::lock_guard<biased_lock> guard(lock);
    ++counter;
  }
  constexpr int kThreads = 4;
  constexpr int kIterations = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIterations; ++i) {
        std::lock_guard<biased_lock> guard(lock);
        ++counter;
      }
    });
  }
  for (int i = 0; i < kIterations; ++i) {
    std::lock_guard<biased_lock> guard(lock);
    ++counter;
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 1 + long{kThreads + 1} * kIterations);
}

TEST(BiasedLock, OwnerThreadExitsAndAnotherTakesOver) {
  biased_lock lock;
  long counter = 0;
  std::thread([&] {
    std::lock_guard<biased_lock> guard(lock);
    ++counter;
  }).join();
  for (int i = 0; i < 100; ++i) {
    std::lock_guard<biased_lock> guard(lock);
    ++counter;
  }
  EXPECT_EQ(counter, 101);
}

// The pool's hit path: try_lock_fast() with unlock_owner(), falling back to lock()/unlock() once
// the bias is gone, while other threads use lock()/unlock() and revoke it.
TEST(BiasedLock, FastPathOwnerAndOtherThreadsKeepMutualExclusion) {
  biased_lock lock;
  long counter = 0;  // deliberately non-atomic
  ASSERT_FALSE(lock.try_lock_fast());  // nobody has taken the bias yet: not a fast-path case
  lock.lock();  // takes the bias
  ++counter;
  lock.unlock();
  // The bias needs the process-wide barrier; without it every lock is the shared one.
  const bool biased = lock.try_lock_fast();
  EXPECT_EQ(biased, process_barrier_available());
  if (biased) {
    lock.unlock_owner();
  } else {
    lock.lock();
    lock.unlock();
  }
  ++counter;
  constexpr int kThreads = 3;
  constexpr int kIterations = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIterations; ++i) {
        std::lock_guard<biased_lock> guard(lock);
        ++counter;
      }
    });
  }
  int fast = 0;
  for (int i = 0; i < kIterations; ++i) {
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
  EXPECT_EQ(counter, 2 + long{kThreads + 1} * kIterations);
  // The other threads revoked the bias for good: no fast path any more.
  EXPECT_FALSE(lock.try_lock_fast());
  EXPECT_LE(fast, kIterations);
}

}  // namespace
}  // namespace clpool::detail
