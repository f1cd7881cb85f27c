// pool_recorder: a clpool::pool_observer that writes a pool's requests as a clpool trace.
//
//   trace_writer out("run.trace");
//   auto recorder = std::make_shared<pool_recorder>(out);
//   pool.set_observer(recorder);
//   ... run the workload ...
//   pool.set_observer(nullptr);  out.flush();
//
// Mapping (pool event -> trace action): hit, miss -> alloc (id = the allocation's id, size = the
// requested bytes); release -> free; out_of_memory -> alloc_failed (id 0); free_held ->
// free_held; stop_holding -> stop_holding. A recorder installed on a pool with live allocations
// leaves their releases out: a trace frees only what it allocated (FORMAT.md: a free names a live
// alloc), so a replay accepts it; it keeps the ids of the allocations it wrote that are still live.
// Allocator-level events (allocator_allocate, allocator_free, trim, oom_retry, ...) are
// consequences of the pool's configuration, which a replay re-creates, so they are not recorded.
//
// The observer runs under the pool's lock, so events arrive in the order they took effect and
// seq follows that order. It must not throw: a write error (disk full) is kept, recording stops,
// and error() reports it.
#ifndef CLPOOL_TRACE_POOL_RECORDER_H_
#define CLPOOL_TRACE_POOL_RECORDER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "pool/pool_types.h"
#include "trace/trace_writer.h"

namespace clpool::trace {

class pool_recorder final : public pool_observer {
 public:
  // Writes to `writer`, which must outlive the recorder (or at least its use by a pool).
  explicit pool_recorder(trace_writer& writer);

  void on_event(const pool_event& event) noexcept override;

  // Gives each alloc and alloc_failed a site (FORMAT.md "Sites"; the writer must be version 2):
  // `site` is called on the allocating thread, under the pool's lock, writes the frame and stack
  // definitions it needs through the writer and returns the stack id (0: none).
  using site_source = std::function<std::uint64_t(trace_writer&)>;
  void set_site_source(site_source site) { site_ = std::move(site); }

  // Trace events written so far.
  std::uint64_t events_recorded() const noexcept { return next_seq_; }
  // The first write error, or empty. Nothing is recorded after one.
  const std::string& error() const noexcept { return error_; }

 private:
  std::uint64_t thread_number();

  trace_writer& writer_;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t next_seq_ = 0;
  std::vector<std::thread::id> threads_;    // index = the thread's number in the trace
  std::unordered_set<std::uint64_t> live_;  // allocation ids written and not yet released
  std::string error_;
  site_source site_;
};

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_POOL_RECORDER_H_
