// device_state: one mock device's configuration and its memory ledgers.
#ifndef MOCKCL_RUNTIME_DEVICE_STATE_H_
#define MOCKCL_RUNTIME_DEVICE_STATE_H_

#include "device_model/device_memory.h"
#include "mockcl/config/config.h"

namespace mockcl {

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
