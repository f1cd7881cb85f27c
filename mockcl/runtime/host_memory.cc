#include "mockcl/runtime/host_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace mockcl {
namespace {
// Below this, the heap is cheaper than a mapping and the bytes are few anyway.
constexpr std::size_t kMapThreshold = 64 * 1024;
}  // namespace

host_block& host_block::operator=(host_block&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = o.data_;
    size_ = o.size_;
    mapped_ = o.mapped_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = false;
  }
  return *this;
}

void* host_block::allocate(std::size_t size, std::size_t align) {
  reset();
  if (size == 0) size = 1;
  if (size >= kMapThreshold || align > 4096) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    data_ = p;
    mapped_ = true;
  } else {
    if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
    std::size_t rounded = (size + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    if (!p) return nullptr;
    std::memset(p, 0, rounded);
    data_ = p;
    mapped_ = false;
  }
  size_ = size;
  return data_;
}

void host_block::free_block() {
  if (mapped_)
    munmap(data_, size_);
  else
    std::free(data_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

}  // namespace mockcl
