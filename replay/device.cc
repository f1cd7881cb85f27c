#include "replay/device.h"

#include "common/cl_status.h"

#include <string>

namespace clpool::replay {

std::uint64_t simulated_device::allocate(std::uint64_t bytes) {
  const std::uint64_t handle = device_.allocate(bytes, semantics_ != alloc_semantics::deferred);
  if (handle == 0) {
    ++failures_;
    const int status = semantics_ == alloc_semantics::host_oom ? common::status_out_of_host_memory
                                                               : memory().profile().oom_status;
    throw allocator_out_of_memory(status, "simulated device: " + std::to_string(bytes) +
                                              " bytes requested, " +
                                              std::to_string(memory().free_bytes()) + " of " +
                                              std::to_string(memory().usable()) + " usable free");
  }
  return handle;
}

std::uint64_t replay_device::allocate_committed(std::uint64_t bytes, std::string_view where) {
  const std::uint64_t handle = allocate(bytes);
  if (!defers_allocation() || first_use(handle)) return handle;
  deallocate(handle, bytes);
  throw allocator_out_of_memory(spec().profile.oom_status,
                                spec().backend + " device: " + std::to_string(bytes) +
                                    " bytes do not fit " + std::string(where) + ": " +
                                    std::to_string(used_bytes()) + " of " +
                                    std::to_string(capacity()) + " bytes committed");
}

void simulated_device::deallocate(std::uint64_t handle, std::uint64_t) noexcept {
  device_.release(handle);
}

bool simulated_device::first_use(std::uint64_t handle) { return device_.commit(handle); }

}  // namespace clpool::replay
