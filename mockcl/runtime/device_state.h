// device_state: one mock device's configuration and its memory ledgers.
#ifndef MOCKCL_RUNTIME_DEVICE_STATE_H_
#define MOCKCL_RUNTIME_DEVICE_STATE_H_

#include <CL/cl.h>

#include <cstddef>

#include "device_model/device_memory.h"
#include "mockcl/config/config.h"

namespace mockcl {

// A cl_device_type argument (clGetDeviceIDs, clCreateContextFromType): CL_DEVICE_TYPE_ALL, or one
// or more of the known bits and no other. Anything else (0 included) is CL_INVALID_DEVICE_TYPE.
inline bool valid_device_type(cl_device_type type) {
  constexpr cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU |
                                   CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                                   CL_DEVICE_TYPE_CUSTOM;
  return type == CL_DEVICE_TYPE_ALL || (type != 0 && (type & ~known) == 0);
}

// Whether the `index`-th device (a GPU or a CPU) is of a valid `type`; the first is the default.
inline bool device_of_type(cl_device_type type, std::size_t index, bool gpu) {
  return type == CL_DEVICE_TYPE_ALL || ((type & CL_DEVICE_TYPE_DEFAULT) && index == 0) ||
         ((type & CL_DEVICE_TYPE_GPU) && gpu) || ((type & CL_DEVICE_TYPE_CPU) && !gpu);
}

// One device: its configuration and its two ledgers, both the device model's (the only place
// mockcl counts device bytes).
struct device_state {
  explicit device_state(const device_config& c)
      : cfg(c),
        memory(c.model, c.capacity),
        pinned(clpool::device_model::device_profile{}, c.pinned) {}
  device_config cfg;
  clpool::device_model::device_memory memory;  // global memory, by the device's profile
  clpool::device_model::device_memory pinned;  // the host-pinned budget, in exact bytes
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_DEVICE_STATE_H_
