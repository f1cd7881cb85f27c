// What the READMEs' C++ snippets assume without showing: a user's own allocator for the pool
// core (README.md, "The pool library"). Kept minimal; the snippets name everything else.
#ifndef CLPOOL_TOOLS_README_SNIPPETS_PRELUDE_H_
#define CLPOOL_TOOLS_README_SNIPPETS_PRELUDE_H_

#include <cstdint>
#include <cstdlib>

#include "pool/allocator.h"

// "my_allocator{...}": an allocator as pool/allocator.h describes one.
struct my_allocator {
  using handle_type = void*;
  handle_type allocate(std::uint64_t bytes) {
    if (void* p = std::malloc(bytes)) return p;
    throw clpool::allocator_out_of_memory(-1, "malloc failed");
  }
  void deallocate(handle_type h, std::uint64_t) noexcept { std::free(h); }
};

#endif  // CLPOOL_TOOLS_README_SNIPPETS_PRELUDE_H_
