// host_block: real bytes behind simulated memory, allocated lazily.
//
// Why: a 64 GiB simulated device must run in a few MiB. Large blocks are anonymous
// MAP_NORESERVE mappings, so the kernel gives real pages only to what is touched (read,
// written, mapped, filled); small ones come from the heap.
#ifndef MOCKCL_RUNTIME_HOST_MEMORY_H_
#define MOCKCL_RUNTIME_HOST_MEMORY_H_

#include <cstddef>

namespace mockcl {

class host_block {
 public:
  host_block() = default;
  host_block(const host_block&) = delete;
  host_block& operator=(const host_block&) = delete;
  host_block(host_block&& o) noexcept { *this = static_cast<host_block&&>(o); }
  host_block& operator=(host_block&& o) noexcept;
  ~host_block() { reset(); }

  // Zero-filled memory of `size` bytes aligned to `align` (a power of two <= 4096), or
  // nullptr if the host refuses. Replaces any previous block.
  void* allocate(std::size_t size, std::size_t align = 64);
  // Frees the block (no-op when empty: inline, so releasing an unbacked buffer costs a branch).
  void reset() {
    if (data_) free_block();
  }
  void* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void free_block();
  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_HOST_MEMORY_H_
