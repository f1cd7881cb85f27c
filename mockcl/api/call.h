// mock_runtime::api_call: the RAII around one entry-point call. Included by runtime.h (after
// mock_runtime).
#ifndef MOCKCL_API_CALL_H_
#define MOCKCL_API_CALL_H_

#include <cstdint>
#include <string>

#include "mockcl/runtime/runtime.h"

namespace mockcl {

// RAII for one entry-point call: takes the lock, counts the call, writes the call-log
// line at the end, then unlocks and runs the user callbacks the call made due.
class mock_runtime::api_call {
 public:
  api_call(mock_runtime& rt, entry_point e) : rt_(rt), entry_(e) {
    rt.mu.lock();
    ++rt.calls_[static_cast<size_t>(e)];
    rt.scheduler.now += rt.scheduler.now != UINT64_MAX;  // Saturates (mock_runtime::execute).
  }
  // The lock is held from construction to here (wait() drops it only while it blocks).
  ~api_call() {
    if (rt_.finish_slow_) [[unlikely]]
      finish_slow();  // Unlocks.
    else
      rt_.mu.unlock();
  }
  api_call(const api_call&) = delete;
  api_call& operator=(const api_call&) = delete;
  // An injected failure for this call (nth_call/probability rules), or 0.
  cl_int fault() { return rt_.faults_.empty() ? 0 : rt_.call_fault(entry_); }
  // Records the result for the call log and returns it.
  cl_int ret(cl_int s) {
    status_ = s;
    return s;
  }
  // A failed call of an entry point that returns an object (clCreateBuffer, ...): `s` goes to
  // `errcode_ret` (when given) and the call log, and the object is null.
  template <class T>
  T fail(cl_int* errcode_ret, cl_int s) {
    if (errcode_ret != nullptr) *errcode_ret = s;
    ret(s);
    return nullptr;
  }
  // Key arguments for the call log (no-ops while the log is off; inline so that the
  // benchmark's hot path pays one predictable branch).
  void arg(const char* key, uint64_t v) {
    if (rt_.log_.on()) arg_slow(key, v);
  }
  void arg(const char* key, const std::string& v) {
    if (rt_.log_.on()) arg_slow(key, v);
  }
  void handle(const char* key, const void* h) {
    if (rt_.log_.on()) handle_slow(key, h);
  }
  runtime_lock& lock() { return rt_.mu; }
  mock_runtime& runtime() { return rt_; }

 private:
  // Writes the call-log line, then unlocks and runs the deferred user callbacks.
  [[gnu::noinline]] void finish_slow();
  void arg_slow(const char* key, uint64_t v);
  void arg_slow(const char* key, const std::string& v);
  void handle_slow(const char* key, const void* h);
  mock_runtime& rt_;
  entry_point entry_;
  cl_int status_ = 0;
};

// What every entry point's file calls them.
using api_call = mock_runtime::api_call;
inline mock_runtime& rt() { return mock_runtime::get(); }

// Submits a new command (mock_runtime::new_command) and, for a blocking enqueue, waits for it;
// the enqueue's status (a failed blocking command: the status its event ended with).
cl_int finish_command(mock_runtime::api_call& c, _cl_event* ev, cl_event* out, bool blocking);

}  // namespace mockcl

#endif  // MOCKCL_API_CALL_H_
