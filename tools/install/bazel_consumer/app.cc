// A program in another Bazel workspace that uses clpool through local_repository
// (tools/install_test.sh builds and runs it): a pool over a malloc allocator. Prints
// "bazel consumer: ok" and exits 0.
#include <cstdio>
#include <cstdlib>

#include "pool/memory_pool.h"

namespace {

struct malloc_allocator {
  using handle_type = void*;
  handle_type allocate(std::uint64_t bytes) {
    void* p = std::malloc(bytes);
    if (p == nullptr) throw clpool::allocator_out_of_memory(-1, "malloc failed");
    return p;
  }
  void deallocate(handle_type h, std::uint64_t) noexcept { std::free(h); }
};

}  // namespace

int main() {
  clpool::memory_pool<malloc_allocator> pool;
  { auto a = pool.allocate(1 << 20); }
  const std::uint64_t managed = pool.managed_bytes();
  { auto again = pool.allocate(1 << 20); }
  if (pool.held_bytes() == 0 || pool.managed_bytes() != managed) {
    std::fprintf(stderr, "bazel consumer: the released block was not reused\n");
    return 1;
  }
  std::printf("bazel consumer: ok\n");
  return 0;
}
