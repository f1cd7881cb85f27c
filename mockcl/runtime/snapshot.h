// A read-only picture of the mock runtime's accounting, taken by the control API. The same
// struct comes back in-process and through the ICD's C API (which ships it as JSON).
#ifndef MOCKCL_RUNTIME_SNAPSHOT_H_
#define MOCKCL_RUNTIME_SNAPSHOT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mockcl/config/config.h"

namespace mockcl {

// Memory accounting of one device, from its ledger (the device model). With the exact profile
// bytes are the requested sizes; with a paged profile (nvidia) they are what the device commits:
// whole pages, shared pages counted once.
struct device_stats {
  std::string name;
  uint64_t capacity =
      0;  // Enforced capacity (free memory at start; the profile's headroom is in it).
  uint64_t outstanding = 0;  // Bytes committed now (buffers + SVM, excluding host-pinned).
  uint64_t peak = 0;         // Highest `outstanding` since the last reset.
  uint64_t pinned_outstanding = 0;
  uint64_t pinned_peak = 0;
};

// Memory accounting of one context (only contexts not yet destroyed): the requested sizes of what
// it has charged, not rounded to the device's pages.
struct context_stats {
  uint64_t id = 0;
  uint64_t outstanding = 0;
  uint64_t peak = 0;
};

// An SVM range a command used.
struct live_svm_range {
  uint64_t address = 0;
  uint64_t size = 0;
  bool operator==(const live_svm_range&) const = default;
};

// One executed command, in execution order.
struct command_record {
  uint64_t id = 0;        // Command id (1-based, in enqueue order across all queues).
  uint64_t queue_id = 0;  // Id of its queue (see controller::object_id).
  std::string kind;       // "write", "read", "fill", "copy", "map", "unmap", "migrate", "kernel",
                          // "marker", "barrier", "svm_free", "svm_memcpy", "svm_memfill",
                          // "svm_map", "svm_unmap", "wait_for_events".
  uint64_t queued = 0;    // Virtual ns at enqueue.
  uint64_t start = 0;     // Virtual ns when it started on its queue.
  uint64_t end = 0;       // Virtual ns when it completed.
  std::vector<uint64_t> mems;       // Ids of the mem objects it used (sub-buffers: their own id).
  std::vector<live_svm_range> svm;  // SVM ranges it used (whole allocations for kernel arguments).
  int32_t status = 0;               // CL_COMPLETE (0) or the error it ended with.
};

// The moment memory really went back to a device: a buffer destroyed (released and no longer
// used by any command) or an SVM block freed (clSVMFree, or clEnqueueSVMFree executed, once no
// command uses it).
struct free_record {
  std::string kind;      // "mem" or "svm".
  uint64_t id = 0;       // controller::object_id of the buffer / SVM block.
  uint64_t address = 0;  // SVM: the block's address; mem: 0.
  uint64_t size = 0;     // Bytes credited back (0 for sub-buffers, and buffers and SVM blocks
                         // never charged).
  uint64_t time = 0;     // Virtual ns: the end of the last command that used it, or the host
                         // clock if none was pending.
};

// Misuse detected by the runtime.
struct misuse_reports {
  uint64_t use_after_release = 0;  // Calls that named a released (quarantined) handle.
  uint64_t double_release = 0;     // Releases of an already released handle.
  uint64_t leaked_at_context_release =
      0;  // Unfreed SVM blocks when their context went (objects hold theirs).
  uint64_t used_while_mapped = 0;  // maps=copy devices: commands that started while a buffer they
                                   // use (or one of its family) was mapped against them.
  std::vector<std::string> messages;  // One line per event, most recent last (bounded).
};

struct accounting_snapshot {
  std::vector<device_stats> devices;
  std::vector<context_stats> contexts;
  std::map<std::string, uint64_t> calls;  // Per entry point name, calls since reset (nonzero only).
  std::map<std::string, uint64_t> live;   // Live objects by type: context, queue, mem, event,
                                          // program, kernel, svm.
  std::vector<command_record> commands;   // Executed commands since reset.
  std::vector<free_record> frees;         // Real frees since reset, in order.
  std::vector<std::string> call_log;      // JSON lines kept in memory (call log ":memory:").
  misuse_reports reports;
  uint64_t faults_fired = 0;  // Injected failures since reset.
  uint64_t now = 0;           // Host virtual clock (ns).
};

// Serialises a snapshot as one JSON document (the ICD's C API carries it this way).
std::string to_json(const accounting_snapshot& s);

// Parses `to_json`'s output; an error for anything else.
value_or_error<accounting_snapshot> snapshot_from_json(const std::string& text);

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_SNAPSHOT_H_
