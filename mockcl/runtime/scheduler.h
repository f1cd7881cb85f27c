// command_scheduler: the state and policy of the deterministic scheduler (scheduler.cc): the host
// virtual clock, the commands submitted and not yet executed, which of them runs next (seeded
// among an out-of-order queue's ready commands), and how long each takes in virtual time.
// Owned by mock_runtime and guarded by its lock; what executing a command does to buffers,
// devices and events is the runtime's (mock_runtime::execute). Internal to //mockcl.
#ifndef MOCKCL_RUNTIME_SCHEDULER_H_
#define MOCKCL_RUNTIME_SCHEDULER_H_

#include <cstdint>
#include <vector>

#include "mockcl/config/config.h"
#include "mockcl/runtime/objects.h"

namespace mockcl {

class command_scheduler {
 public:
  // Host virtual clock, ns. Every entry-point call ticks it; waits move it to a command's end.
  uint64_t now = 0;

  // Replaces the mode, seed and kernel duration; restarts the seeded picks.
  void configure(const schedule_config& s) {
    config_ = s;
    rng_ = s.seed;
  }
  const schedule_config& config() const { return config_; }
  // Eager mode runs the scheduler after every enqueue; lazy mode only on flush, finish, waits and
  // blocking calls.
  bool eager() const { return config_.mode == schedule_mode::eager; }

  // Command ids: 1, 2, ... in enqueue order (restarted by reset()).
  uint64_t next_command_id() { return ++next_command_; }

  // Submitted commands not yet executed, in submission order. add() takes the caller's internal
  // reference on ev; take_next() hands it back.
  void add(_cl_event* ev) { pending_.push_back(ev); }
  const std::vector<_cl_event*>& pending() const { return pending_; }
  // Removes and returns the command to execute next, or null if none is ready: the first ready
  // one, or with a seed, a seeded pick among the ready ones of the first one's out-of-order queue.
  _cl_event* take_next();
  // Whether all of ev's dependencies have completed.
  static bool ready(const _cl_event* ev);
  // The virtual duration of a command: a fixed launch cost plus ~16 GB/s for data, the configured
  // time for kernels.
  uint64_t duration(const _cl_event* ev) const;

  // While a command completes: its end time, which is then the time of the frees it causes; 0
  // otherwise. See free_time().
  void set_completion_time(uint64_t t) { completion_time_ = t; }
  // The virtual time of a free made now (free_record::time).
  uint64_t free_time() const { return completion_time_ ? completion_time_ : now; }

  // Forgets pending commands without releasing them (reset: the objects are destroyed wholesale).
  void drop_pending() { pending_.clear(); }
  // The clock and command ids start again (reset).
  void restart() {
    now = 0;
    next_command_ = 0;
  }

 private:
  schedule_config config_;
  uint64_t completion_time_ = 0;
  uint64_t next_command_ = 0;
  uint64_t rng_ = 0;
  std::vector<_cl_event*> pending_;
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_SCHEDULER_H_
