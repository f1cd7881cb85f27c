// simulated_device: a device that is only bookkeeping. Its memory is a device_memory (the one
// ledger, with the profile's pages, packing and headroom) and its blocks a table of slots named
// by handles. The one simulated device of the tree: clpool_replay's `--device sim`
// (replay/device.h) and the pool's test device (pool/testing/fake_allocator.h) are each a thin
// adapter over it, for their own seam and error convention.
//
//   simulated_device d(profile, 64 << 20);
//   std::uint64_t h = d.allocate(4096, /*commit=*/true);   // 0: it did not fit
//   d.release(h);
//
// A block is committed when it is made (immediate devices) or later, at its first commit()
// (deferred devices). Handles name a slot and its generation (slot + 1 in the low 32 bits, the
// slot's reuse count in the high 32): freed slots are reused, last freed first, so memory follows
// the blocks alive at once, and a handle freed once is still recognised as freed after its slot
// was reused. (A slot reused 2^32 times would repeat a handle, and slot 2^32 - 1 would carry into
// the generation; no use comes near either.) Never 0. Not thread-safe; deterministic.
#ifndef CLPOOL_DEVICE_MODEL_SIMULATED_DEVICE_H_
#define CLPOOL_DEVICE_MODEL_SIMULATED_DEVICE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "device_model/device_memory.h"

namespace clpool::device_model {

class simulated_device {
 public:
  // A device of `capacity` bytes with `profile`'s rules.
  simulated_device(const device_profile& profile, std::uint64_t capacity)
      : memory_(profile, capacity) {}

  // Makes a block of `bytes` (> 0), committed now when `commit`, and returns its handle; or
  // returns 0, changing nothing, when `commit` and it does not fit.
  std::uint64_t allocate(std::uint64_t bytes, bool commit) {
    placement where;
    if (commit && !memory_.try_commit(bytes, where)) return 0;
    std::uint32_t index;
    if (free_slots_.empty()) {
      index = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(slot{});
      // Room for every slot on the free list, so that release (noexcept) never allocates.
      free_slots_.reserve(slots_.capacity());
    } else {
      index = free_slots_.back();
      free_slots_.pop_back();
    }
    slot& s = slots_[index];
    s.bytes = bytes;
    s.where = where;
    s.live = true;
    s.committed = commit;
    ++live_blocks_;
    return (std::uint64_t{s.generation} << 32) | (std::uint64_t{index} + 1);
  }

  // Commits the live block `handle` if it is not yet. Returns false when it does not fit (the
  // block stays uncommitted); true when it is committed, now or earlier.
  bool commit(std::uint64_t handle) {
    slot& s = slots_[(handle & 0xffffffffu) - 1];
    if (s.committed) return true;
    if (!memory_.try_commit(s.bytes, s.where)) return false;
    s.committed = true;
    return true;
  }

  // The size of the live block `handle`, or nothing when `handle` names no live block: never
  // made, or already released.
  std::optional<std::uint64_t> live_bytes(std::uint64_t handle) const noexcept {
    const slot* s = find(handle);
    if (s == nullptr) return std::nullopt;
    return s->bytes;
  }

  // Releases the live block `handle` (what it committed goes back). Returns false, changing
  // nothing, when `handle` names no live block.
  bool release(std::uint64_t handle) noexcept {
    slot* s = const_cast<slot*>(find(handle));
    if (s == nullptr) return false;
    if (s->committed) memory_.release(s->where, s->bytes);
    s->live = false;
    s->committed = false;
    ++s->generation;
    --live_blocks_;
    free_slots_.push_back(static_cast<std::uint32_t>((handle & 0xffffffffu) - 1));
    return true;
  }

  std::uint64_t live_blocks() const noexcept { return live_blocks_; }
  const device_memory& memory() const noexcept { return memory_; }
  device_memory& memory() noexcept { return memory_; }

 private:
  struct slot {
    std::uint64_t bytes = 0;
    placement where;
    std::uint32_t generation = 0;
    bool live = false;
    bool committed = false;
  };

  const slot* find(std::uint64_t handle) const noexcept {
    const std::uint64_t index_plus_one = handle & 0xffffffffu;
    if (index_plus_one == 0 || index_plus_one > slots_.size()) return nullptr;
    const slot& s = slots_[index_plus_one - 1];
    return s.live && s.generation == (handle >> 32) ? &s : nullptr;
  }

  device_memory memory_;
  std::vector<slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t live_blocks_ = 0;
};

}  // namespace clpool::device_model

#endif  // CLPOOL_DEVICE_MODEL_SIMULATED_DEVICE_H_
