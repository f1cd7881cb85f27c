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

}  // namespace
}  // namespace clpool::detail
