// The seam between the pool and a backend: a two-function allocator interface.
//
// The pool core never includes an OpenCL header. An OpenCL buffer allocator, an SVM allocator or a
// test fake all plug in here by providing a handle type and two functions.
#ifndef CLPOOL_POOL_ALLOCATOR_H_
#define CLPOOL_POOL_ALLOCATOR_H_

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace clpool {

// A block allocator:
//   - `handle_type`: a cheap, copyable value naming one block (a cl_mem, a pointer, an id). It is
//     stored in the pool's free lists, so copies must be nothrow.
//   - `allocate(bytes)` returns a new block of at least `bytes` bytes. To say "no room" it throws
//     clpool::allocator_out_of_memory; any other exception is a different failure, which the pool
//     passes on unchanged. It is never called with 0.
//   - `deallocate(handle, bytes)` gives a block back; `bytes` is what was passed to allocate. It
//     must not throw: there is nobody to report to on the release path.
// The pool serialises its calls to one allocator, so an allocator need not be thread-safe itself.
template <class A>
concept block_allocator =
    std::is_nothrow_copy_constructible_v<typename A::handle_type> &&
    std::is_nothrow_copy_assignable_v<typename A::handle_type> &&
    std::is_default_constructible_v<typename A::handle_type> &&
    requires(A& a, std::uint64_t bytes, typename A::handle_type h) {
      { a.allocate(bytes) } -> std::same_as<typename A::handle_type>;
      { a.deallocate(h, bytes) } noexcept;
    };

}  // namespace clpool

#endif  // CLPOOL_POOL_ALLOCATOR_H_
