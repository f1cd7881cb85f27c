#include "replay/device.h"

#include "common/cl_status.h"

#include <string>

namespace clpool::replay {

std::uint64_t simulated_device::allocate(std::uint64_t bytes) {
  device_model::placement where;
  if (semantics_ != alloc_semantics::deferred && !memory_.try_commit(bytes, where)) {
    ++failures_;
    const int status = semantics_ == alloc_semantics::host_oom
                           ? common::status_out_of_host_memory
                           : memory_.profile().oom_status;
    throw allocator_out_of_memory(
        status, "simulated device: " + std::to_string(bytes) + " bytes requested, " +
                    std::to_string(memory_.free_bytes()) + " of " +
                    std::to_string(memory_.usable()) + " usable free");
  }
  return slots_.insert(slot{bytes, semantics_ != alloc_semantics::deferred, where});
}

void simulated_device::deallocate(std::uint64_t handle, std::uint64_t) noexcept {
  const slot& s = slots_[handle];
  if (s.committed) memory_.release(s.where, s.bytes);
  slots_.erase(handle);
}

bool simulated_device::first_use(std::uint64_t handle) {
  slot& s = slots_[handle];
  if (s.committed) return true;
  if (!memory_.try_commit(s.bytes, s.where)) return false;
  s.committed = true;
  return true;
}

}  // namespace clpool::replay
