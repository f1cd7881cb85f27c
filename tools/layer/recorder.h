// recorder: the OpenCL-independent heart of the layer. It decides whether an allocation may
// proceed (simulated budget, fault injection), keeps the outstanding-bytes account, assigns handle
// ids, thread ids and queue ids, and writes trace events in one strictly increasing order.
//
// Thread-safe: the layer calls it from application threads and from ICD threads (destructor and
// SVM-free callbacks run there). One mutex guards everything, so the order of `seq` in the trace
// is the order in which the recorder saw the events. The sink writes each event under it too,
// straight into the trace file's memory map (trace_file_sink.h): the budget and the ids need the
// lock anyway, and a separate lock-free offset reservation or per-thread buffers would add work
// per event and, for per-thread buffers, a flush that _exit and SIGKILL never run.
#ifndef CLPOOL_TOOLS_LAYER_RECORDER_H_
#define CLPOOL_TOOLS_LAYER_RECORDER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "device_model/device_memory.h"
#include "layer_api/layer_settings.h"
#include "stacks/capture.h"
#include "tools/layer/report_file.h"
#include "trace/trace_event.h"

namespace clpool::layer {

// Where events go. write() is called with the recorder's mutex held, in seq order.
class event_sink {
 public:
  virtual ~event_sink() = default;
  // Writes one event. Returns false when it could not (disk full, say); the recorder then
  // reports the problem once on stderr and stops writing.
  virtual bool write(const trace::trace_event& event) = 0;
  // Writes frame and stack definitions (FORMAT.md "Sites"). Returns false as write() does.
  virtual bool sites(const stacks::definitions&) { return true; }
  // Writes a "# key: value" comment (one line; `key` one word). Returns false as write() does.
  virtual bool comment(std::string_view key, std::string_view value) = 0;
  // The process is exiting (exit() or a return from main; called once, with the recorder's lock
  // held): nothing will run after the last event, which may still come from a driver thread
  // during static destruction, so from now on each event must reach the file by itself.
  virtual void process_exiting() noexcept {}
  // Why the last write, sites() or comment() that returned false failed ("" when unknown).
  virtual std::string error() const { return ""; }
};

// One block the layer handed out, as the recorder remembers it until it is freed.
struct block_info {
  std::uint64_t id = 0;
  std::uint64_t size = 0;
  trace::trace_kind kind = trace::trace_kind::buffer;
  std::uint64_t flags = 0;
  bool counted = false;  // whether its bytes count against the budget
  bool charged = false;  // counted and committed on the budget's device (at creation or first use)
  device_model::placement where = {};  // what it took on the budget's device (when charged)
  std::uint64_t stack = 0;  // the allocation's site (FORMAT.md "Sites"); 0 when not captured
};

// Why an allocation was refused by the layer itself.
enum class refusal : std::uint8_t {
  none,
  budget,           // outstanding + size would exceed CLPOOL_LAYER_BUDGET
  still_full,       // CLPOOL_LAYER_FAIL_UNTIL_FREE: nothing was freed since the injected failure
  injected_nth,     // it was the CLPOOL_LAYER_FAIL_NTH-th allocation
  injected_random,  // CLPOOL_LAYER_FAIL_PROB drew it
  above_max_alloc,  // above the CL_DEVICE_MAX_MEM_ALLOC_SIZE the layer reports, on a profile that
                    // enforces it: CL_INVALID_BUFFER_SIZE, as OpenCL requires of clCreateBuffer
};

// What a refused request returns: the status the profile's device gives when out of memory (-4,
// CL_MEM_OBJECT_ALLOCATION_FAILURE, without a profile).
int refusal_status(const layer_settings& settings);

// Appends `line` and a newline to the errors file `path` (CLPOOL_LAYER_ERRORS): one it creates
// (then beginning with errors_file_header), or one that begins with that header, and nothing
// else (layer_settings.h says why). False when it wrote nothing: the caller prints the line on
// stderr instead.
bool append_to_errors_file(const std::string& path, const std::string& line) noexcept;

// True for kinds that take new device memory (buffer, svm). `host` blocks live in host memory
// and `sub` blocks alias their parent, so neither counts against the budget.
bool counts_against_budget(trace::trace_kind kind);

class recorder {
 public:
  // `sink` may be null: then nothing is written, but budget and fault injection still apply.
  recorder(const layer_settings& settings, std::unique_ptr<event_sink> sink);

  // Opens CLPOOL_LAYER_REPORT when set (report_file.h). Returns an error message, "" on success.
  std::string open_report();

  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;

  // The outcome of begin_alloc: either a refusal (already recorded as alloc_failed) or a block
  // whose bytes are reserved until commit_alloc or abort_alloc.
  struct ticket {
    refusal refused = refusal::none;
    int status = 0;  // when refused: what the request returns (refusal_status)
    block_info block;
  };

  // Called before asking the driver for `size` bytes of `kind`. Counts the attempt for fault
  // injection (sub-buffers excluded: they allocate nothing), checks the budget, and either
  // reserves the bytes or records alloc_failed (followed by a "# failure:" comment giving the
  // status and the reason) and refuses.
  // A `size` above `max_alloc` (the layer's reported CL_DEVICE_MAX_MEM_ALLOC_SIZE, passed only
  // where the profile enforces it) is refused first with CL_INVALID_BUFFER_SIZE: no attempt, no
  // injected fault; recorded as alloc_failed as the driver's own -61 is (common/cl_status.h).
  ticket begin_alloc(std::uint64_t size, trace::trace_kind kind, std::uint64_t flags,
                     std::uint64_t max_alloc = ~std::uint64_t{0});

  // Records each allocation's stack from now on (CLPOOL_LAYER_STACKS): begin_alloc captures it on
  // the calling thread; native frames are symbolized at exit, when 4096 addresses wait, and
  // after each recorded failure (a program may die of it before its exit handlers run).
  void enable_stacks(std::unique_ptr<stacks::capturer> capturer);

  // The driver allocated the block: records `alloc`.
  void commit_alloc(const block_info& block);

  // True when the budget's profile commits buffers at first use (oom_at first_use or execution:
  // CLPOOL_LAYER_PROFILE=nvidia), and SVM blocks too where it says svm_oom_at = first_use (which
  // a profile allows only then): begin_alloc charges those blocks nothing, and the enqueues that
  // use one call first_use().
  bool charges_at_first_use() const noexcept { return buffers_first_use_; }

  // The block is used by `call` (an enqueue) for the first time, or again: charges it to the
  // budget if it is not yet. Returns 0, or the profile's out-of-memory status when it does not
  // fit, after recording a "# failure: first use ..." comment (the block stays uncharged, as on
  // a GPU whose enqueue failed).
  // `newly_charged`, when given, is set to whether this call charged the block.
  int first_use(block_info& block, const char* call, bool* newly_charged = nullptr);
  // The enqueue that charged `block` by first_use() was then rejected by the driver (for another
  // reason, e.g. an invalid argument): gives the charge back, as the GPU would not have used it.
  void undo_first_use(block_info& block);

  // first_use() for the SVM block that contains `pointer` (SVM commands and kernel arguments may
  // point into a block); nothing for a pointer the layer did not hand out. `newly_charged` is set
  // to the block's start when this call charged it (for undo_first_use_svm), else null.
  int first_use_svm(const void* pointer, const char* call, const void*& newly_charged);
  void undo_first_use_svm(const void* start);

  // The driver refused: releases the reservation. When the driver's answer meant "no room",
  // `failure` describes it (e.g. "status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the driver")
  // and alloc_failed is recorded with a "# failure: seq N <failure>" comment. Empty `failure`:
  // another error (invalid arguments allocate nothing and would mislead a replay); nothing is
  // recorded.
  void abort_alloc(const block_info& block, std::string_view failure);

  // The block's memory was given back: credits the budget and records `free` on `queue`. With
  // the block's `handle` (a cl_mem the driver destroyed), forgets the program's references to it.
  void free_block(const block_info& block, std::uint64_t queue, const void* handle = nullptr);

  // --- The program's release (FORMAT.md "Two moments of a free"; only when recording) ---
  // The program holds one reference to the buffer `handle`, which is `block` (called once the
  // driver made it); clRetainMemObject adds one (retain_mem).
  void hold_mem(const void* handle, const block_info& block);
  void retain_mem(const void* handle);
  // clReleaseMemObject is about to run on `handle`: when it drops the program's last reference,
  // returns the block's id (else 0), and end_release() then records `release`, unless the driver
  // destroyed the buffer during the call (its `free` is then both moments). `released` says
  // whether the driver accepted the call (if not, the program still holds its reference).
  std::uint64_t begin_release(const void* handle);
  void end_release(const void* handle, std::uint64_t id, bool released);
  // clCreateSubBuffer made `sub` (held) from `parent` (held): the parent's memory stays reachable
  // through the sub-buffer, so the program's release of the parent is recorded only once the
  // program has let go of its sub-buffers too, after the last one's release (or free).
  void hold_sub_buffer(const void* sub, const void* parent);
  // The program released the SVM block at `pointer` with clEnqueueSVMFree on `queue`: records
  // `release`; its `free` follows when the command runs.
  void release_svm(const void* pointer, std::uint64_t queue);
  // The program waited for its queued commands (clFinish on `queue`, clWaitForEvents or a
  // blocking call with `queue` null): records `wait`, only while a block it released awaits the
  // driver's free (an earlier wait frees nothing in any replay). One relaxed load when none does.
  void note_wait(const void* queue);

  // SVM pointers are freed by address, so the recorder keeps them in a map.
  void remember_svm(const void* pointer, const block_info& block);
  // Forgets `pointer` and returns its block, or nothing when the layer never saw it.
  std::optional<block_info> forget_svm(const void* pointer);

  // A small dense id for `queue` (1, 2, ... in order of first sight; 0 for null).
  std::uint64_t queue_id(const void* queue);

  // A new budget (CLPOOL_LAYER_BUDGET) for later allocations and first uses; what is committed
  // stays, even above it. False, changing nothing, unless the profile's headroom < bytes <= 2^62.
  bool set_budget(std::uint64_t bytes);
  std::uint64_t budget_bytes() const;
  // The budget's device profile (CLPOOL_LAYER_PROFILE; `exact` without one). Never changes.
  const device_model::device_profile& profile() const noexcept { return budget_.profile(); }

  // Bytes of live counted blocks plus reservations, as the budget's device commits them.
  std::uint64_t outstanding_bytes() const;

  // Whether events are being written (a sink was given and has not failed).
  bool recording() const;

  // Whether the layer must see each block's real destruction: to record its free, or to credit
  // the budget. When not (no trace, no budget), it need not register destructor callbacks.
  bool watches_frees() const noexcept { return watches_frees_; }

  // Whether the layer has anything to do with allocations at all (a trace, a budget or injected
  // failures). When not, it intercepts nothing and costs the program nothing.
  bool intercepts_allocations() const noexcept {
    return watches_frees_ || settings_.fail_nth || settings_.fail_probability;
  }

  // Called from an atexit handler: tells the sink (event_sink::process_exiting). Gives up after
  // about a second if the lock stays taken (exit() called by a signal handler that interrupted
  // this very thread inside the recorder): the events are safe in the file anyway.
  void process_exiting() noexcept;

  // Appends to the report what the program still holds now (its buffers it has not released and
  // its SVM blocks not freed): "exit live_blocks B live_bytes X", once: at exit (atexit), when a
  // report is open, or before, when the program's own runtime asks at its exit
  // (clpool_layer_report_exit: Python's atexit, before the interpreter frees its objects).
  void report_exit() noexcept;

  // "" while every event reached the trace; once one could not: "could not write to the trace
  // file (REASON); the trace is incomplete after event N" (also on stderr, and appended to
  // CLPOOL_LAYER_ERRORS when set). For a harness in the process (the pytest plugin).
  std::string trace_failure() const;

  // Each thread the recorder has seen: (its OS thread id, its `thread` in the trace), in the
  // order of their ids. For a harness that must tell apart the threads it started from others.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> threads() const;

  // The seq the next event will get: every event with a lower one is in the trace, or being
  // written (a harness marks a moment with it, FORMAT.md's seq order).
  std::uint64_t next_seq() const;

  // Fault points so far: allocation attempts (FAIL_NTH's count) and first-use charges
  // (FAIL_FIRST_USE_NTH's).
  std::pair<std::uint64_t, std::uint64_t> fault_points() const;
  // Fails the `n`th allocation attempt (or first use) from now on, as FAIL_NTH (FAIL_FIRST_USE_NTH)
  // would, and, with `until_free`, keeps the device full after it (FAIL_UNTIL_FREE). For a
  // harness that sweeps one test at a time (the pytest plugin's --clpool-oom-sweep). n 0 disarms.
  void arm(bool first_use, std::uint64_t n, bool until_free);

 private:
  int first_use_locked(block_info& block, const char* call, bool& newly_charged);
  void count_attempt_locked(ticket& t);
  std::string refusal_reason_locked(const ticket& t, std::uint64_t max_alloc) const;
  void undo_first_use_locked(block_info& block);
  std::map<const void*, block_info>::iterator svm_containing_locked(const void* pointer);
  void write_locked(trace::trace_action action, const block_info& block, std::uint64_t queue,
                    std::string_view failure = {});
  void sink_failed_locked(std::uint64_t seq);
  void write_sites_locked(bool symbolize);
  std::uint64_t thread_id_locked();

  const layer_settings settings_;
  mutable std::mutex mutex_;
  std::unique_ptr<event_sink> sink_;
  bool sink_failed_ = false;
  std::string trace_failure_;                                     // trace_failure()
  std::vector<std::pair<std::uint64_t, std::uint64_t>> threads_;  // threads()
  bool warned_oversize_ = false;
  const std::chrono::steady_clock::time_point start_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_id_ = 1;
  std::uint64_t next_thread_ = 0;
  std::uint64_t attempts_ = 0;    // allocation attempts seen, for FAIL_NTH
  std::uint64_t first_uses_ = 0;  // first-use charges tried, for FAIL_FIRST_USE_NTH
  // FAIL_UNTIL_FREE: after the injected failure, requests of at least full_from_ bytes fail until
  // device memory is freed (0: the device is not full).
  std::uint64_t full_from_ = 0;
  std::uint64_t armed_alloc_ = 0, armed_first_use_ = 0;  // arm(): the attempt / first use to fail
  bool armed_until_free_ = false;
  bool fails_alloc(std::uint64_t attempt) const {
    return (settings_.fail_nth && attempt == *settings_.fail_nth) ||
           (armed_alloc_ != 0 && attempt == armed_alloc_);
  }
  bool fails_first_use(std::uint64_t n) const {
    return (settings_.fail_first_use_nth && n == *settings_.fail_first_use_nth) ||
           (armed_first_use_ != 0 && n == armed_first_use_);
  }
  bool until_free() const { return settings_.fail_until_free || armed_until_free_; }
  void memory_freed_locked() { full_from_ = 0; }
  report_file report_;          // CLPOOL_LAYER_REPORT
  bool exit_reported_ = false;  // report_exit() wrote its line
  // The simulated device of CLPOOL_LAYER_BUDGET (unbounded without one), with the profile of
  // CLPOOL_LAYER_PROFILE (exact without one): the device model's ledger.
  device_model::device_memory budget_;
  const bool buffers_first_use_;  // the profile's oom_at is not creation
  const bool svm_first_use_;      // its svm_oom_at is first_use
  const bool watches_frees_;
  std::mt19937_64 rng_;
  std::unordered_map<const void*, std::uint64_t> queues_;
  // Ordered, to find the block containing a pointer (first_use_svm).
  std::map<const void*, block_info> svm_blocks_;
  const std::uint64_t instance_;                // distinguishes recorders in thread-local caches
  std::unique_ptr<stacks::capturer> capturer_;  // null: no stacks
  stacks::definitions sites_;                   // definitions not yet written (reused)
  // The program's release: each live buffer the program still holds and its references; the
  // blocks inside a clReleaseMemObject call now; those released and awaiting the driver's free.
  struct held_mem {
    block_info block;
    std::uint64_t refs = 1;
  };
  std::unordered_map<const void*, held_mem> held_;
  std::vector<block_info> releasing_;
  std::unordered_set<std::uint64_t> awaiting_free_;  // ids
  std::atomic<std::size_t> awaiting_count_{0};       // awaiting_free_.size(), read unlocked
  // Sub-buffers the program holds (id: its parent's id); per parent, how many; a parent's release
  // made while it had some, recorded when the last one goes (sub_let_go_locked).
  std::unordered_map<std::uint64_t, std::uint64_t> parent_of_sub_;
  std::unordered_map<std::uint64_t, std::uint64_t> subs_held_;
  std::unordered_map<std::uint64_t, block_info> release_after_subs_;
  void record_release_locked(const block_info& block);
  void sub_let_go_locked(std::uint64_t sub_id);
};

}  // namespace clpool::layer

#endif  // CLPOOL_TOOLS_LAYER_RECORDER_H_
