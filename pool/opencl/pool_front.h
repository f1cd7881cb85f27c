// pool_front<A>: what every OpenCL pool (buffer_pool, svm_pool, host_pinned_pool) shows of the
// core memory_pool it wraps, written once: the counters under the seeds' names, free_held,
// stop_holding, and the core pool itself (statistics, limits, trimming, observers). A pool adds
// only what its kind of memory needs (allocate, and its handle type).
#ifndef CLPOOL_POOL_OPENCL_POOL_FRONT_H_
#define CLPOOL_POOL_OPENCL_POOL_FRONT_H_

#include <cstdint>
#include <utility>

#include "pool/memory_pool.h"

namespace clpool::opencl {

template <block_allocator A>
class pool_front {
 public:
  // The seeds' names (PyOpenCL's MemoryPool, PyCUDA's pools), forwarded to the core pool.
  std::uint64_t held_blocks() const { return pool_.held_blocks(); }
  std::uint64_t active_blocks() const { return pool_.active_blocks(); }
  std::uint64_t held_bytes() const { return pool_.held_bytes(); }
  std::uint64_t active_bytes() const { return pool_.active_bytes(); }
  std::uint64_t managed_bytes() const { return pool_.managed_bytes(); }
  void free_held() { pool_.free_held(); }
  void stop_holding() { pool_.stop_holding(); }

  // The core pool: counters, statistics, limits, trimming, observers, reclaim callbacks.
  memory_pool<A>& pool() noexcept { return pool_; }
  const memory_pool<A>& pool() const noexcept { return pool_; }

 protected:
  // Throws argument_error for bad pool options.
  pool_front(A&& allocator, const pool_options& options) : pool_(std::move(allocator), options) {}
  ~pool_front() = default;

  memory_pool<A> pool_;
};

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_POOL_FRONT_H_
