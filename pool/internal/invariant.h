// Internal invariant checks. CLPOOL_ASSERT is on unless NDEBUG is defined (so in Bazel's default
// fastbuild, off in --config=opt). CLPOOL_EXPENSIVE_ASSERT is on exactly when
// CLPOOL_EXPENSIVE_CHECKS is defined, whatever NDEBUG says (the pool's tests define it, so they
// check under --config=opt too), because its checks walk whole data structures (`*_is_valid()`).
#ifndef CLPOOL_POOL_INTERNAL_INVARIANT_H_
#define CLPOOL_POOL_INTERNAL_INVARIANT_H_

#include <cstdio>
#include <cstdlib>

namespace clpool::internal {

// Prints the failed condition and aborts: an invariant failure means memory accounting is already
// wrong, and carrying on could free a block twice.
[[noreturn]] inline void invariant_failed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "clpool: internal invariant failed: %s (%s:%d)\n", condition, file, line);
  std::abort();
}

}  // namespace clpool::internal

#ifdef NDEBUG
#define CLPOOL_ASSERT(condition) ((void)0)
#else
#define CLPOOL_ASSERT(condition) \
  ((condition) ? (void)0 : ::clpool::internal::invariant_failed(#condition, __FILE__, __LINE__))
#endif

#ifdef CLPOOL_EXPENSIVE_CHECKS
#define CLPOOL_EXPENSIVE_ASSERT(condition) \
  ((condition) ? (void)0 : ::clpool::internal::invariant_failed(#condition, __FILE__, __LINE__))
#else
#define CLPOOL_EXPENSIVE_ASSERT(condition) ((void)0)
#endif

#endif  // CLPOOL_POOL_INTERNAL_INVARIANT_H_
