#include "tools/replay/device.h"

#include <string>

namespace clpool::replay {

std::string_view to_string(alloc_semantics semantics) {
  return semantics == alloc_semantics::immediate ? "immediate" : "deferred";
}

std::optional<alloc_semantics> parse_semantics(std::string_view word) {
  if (word == "immediate") return alloc_semantics::immediate;
  if (word == "deferred") return alloc_semantics::deferred;
  return std::nullopt;
}

void simulated_device::commit(slot& s) noexcept {
  s.committed = true;
  used_ += s.bytes;
  if (used_ > peak_) peak_ = used_;
}

std::uint64_t simulated_device::allocate(std::uint64_t bytes) {
  if (semantics_ == alloc_semantics::immediate && !fits(bytes)) {
    ++failures_;
    throw allocator_out_of_memory(
        device_oom_status, "simulated device: " + std::to_string(bytes) + " bytes requested, " +
                               std::to_string(capacity_ - used_) + " of " +
                               std::to_string(capacity_) + " free");
  }
  std::uint64_t handle;
  if (!free_slots_.empty()) {
    handle = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slots_.emplace_back();
    handle = slots_.size();
  }
  slot& s = slots_[handle - 1];
  s.bytes = bytes;
  s.committed = false;
  if (semantics_ == alloc_semantics::immediate) commit(s);
  return handle;
}

void simulated_device::deallocate(std::uint64_t handle, std::uint64_t) noexcept {
  slot& s = slots_[handle - 1];
  if (s.committed) used_ -= s.bytes;
  s = slot{};
  free_slots_.push_back(handle);
}

bool simulated_device::first_use(std::uint64_t handle) {
  slot& s = slots_[handle - 1];
  if (s.committed) return true;
  if (!fits(s.bytes)) return false;
  commit(s);
  return true;
}

}  // namespace clpool::replay
