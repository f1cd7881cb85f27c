// The pool's hit path as a fixed loop, for counting instructions (timings here are too noisy to
// compare small changes; instruction counts are exact):
//   bazel build --config=opt //tools/dev/bench:hit_loop
//   valgrind --tool=callgrind bazel-bin/tools/hit_loop
// The program's total instructions, less a run with 0 pairs (`hit_loop 0`), divided by the pair
// count give the instructions per allocate/release pair.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "pool/memory_pool.h"
#include "pool/testing/fake_allocator.h"

int main(int argc, char** argv) {
  long pairs = 2'000'000;
  if (argc > 1) {
    char* end = nullptr;
    errno = 0;
    pairs = std::strtol(argv[1], &end, 10);
    if (argc > 2 || end == argv[1] || *end != '\0' || errno != 0 || pairs < 0) {
      std::fprintf(stderr,
                   "hit_loop: bad arguments; usage: hit_loop [PAIRS], PAIRS a whole number >= 0\n");
      return 2;
    }
  }
  clpool::memory_pool<clpool::testing::counting_allocator> pool;
  pool.allocate(4096).release();  // one held block: every allocation below is a hit
  // The size comes from outside (always 4096) so that the compiler cannot fold the bin
  // computation away.
  const std::uint64_t size = 4096 + static_cast<std::uint64_t>(argv[0] == nullptr);
  unsigned long sum = 0;
  for (long i = 0; i < pairs; ++i) {
    auto block = pool.allocate(size);
    sum += static_cast<unsigned long>(block.handle());
  }
  std::printf("%ld pairs, handle sum %lu\n", pairs, sum);
  return 0;
}
