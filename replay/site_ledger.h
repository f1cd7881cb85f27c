// Which allocation site holds the memory: per live block and per block the pool holds, the stack
// (FORMAT.md "Sites") of the allocation that made it, summed per stack at an out-of-memory.
//
// Only kept when the trace has sites (replay_options::sites): one hash-map entry per live or held
// block, on top of the engine's own.
#ifndef CLPOOL_REPLAY_SITE_LEDGER_H_
#define CLPOOL_REPLAY_SITE_LEDGER_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "device_model/device_memory.h"
#include "replay/result.h"

namespace clpool::replay {

class site_ledger {
 public:
  // `profile`: how the device rounds each block it commits (committed_bytes).
  explicit site_ledger(const device_model::device_profile& profile = {}) : profile_(profile) {}

  // A block `handle` (0: no device block, e.g. a sub-buffer) was handed out for trace id `id`.
  // When the pool held `handle` (a hit), it no longer does. `awaits_use`: the device commits the
  // block at its first use (a version-4 trace on a device that defers) and holds nothing for it
  // yet; until on_use it is in no site's figures, as it is in no capacity's sum.
  void on_alloc(std::uint64_t id, std::uint64_t stack, std::uint64_t requested,
                std::uint64_t rounded, std::uint64_t handle, bool awaits_use = false);
  // Trace id `id`'s block was committed at its first use.
  void on_use(std::uint64_t id);
  // Trace id `id` was freed. With `pool_holds`, its block stays with the pool (until
  // on_device_free) under the site of the allocation that last used it.
  void on_free(std::uint64_t id, bool pool_holds);
  // The device got block `handle` back (the pool freed it, or no pool).
  void on_device_free(std::uint64_t handle);

  // Per site, largest rounded bytes first (ties: lower stack id first): the committed blocks the
  // program holds, and those the pool holds.
  std::vector<site_usage> live_sites() const;
  std::vector<site_usage> held_sites() const;

 private:
  struct block {
    std::uint64_t stack, requested, rounded, committed, handle;
    bool awaits_use;
  };
  static std::vector<site_usage> sum(const std::vector<const block*>& blocks);
  device_model::device_profile profile_;
  std::unordered_map<std::uint64_t, block> live_;  // trace id -> block
  std::unordered_map<std::uint64_t, block> held_;  // device handle -> block the pool holds
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_SITE_LEDGER_H_
