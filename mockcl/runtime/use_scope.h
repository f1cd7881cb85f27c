// use_scope: the charges of one enqueue that uses several buffers and SVM blocks, all or nothing.
#ifndef MOCKCL_RUNTIME_USE_SCOPE_H_
#define MOCKCL_RUNTIME_USE_SCOPE_H_

#include <vector>

#include "mockcl/runtime/runtime.h"

namespace mockcl {

// The charges of one enqueue that uses several buffers and SVM blocks, all or nothing: when one
// does not fit, the destructor gives back what the call charged before it, unless keep() was
// called. A failed call has no effect (the layer's budget undoes the same way, first_use.cc).
// With `at_execution`, the buffers of a command that is executing on a device with
// oom_at=execution (mock_runtime::charge_at_execution): a failed command has no effect either.
class use_scope {
 public:
  use_scope(mock_runtime& rt, _cl_command_queue* q, bool at_execution = false)
      : rt_(rt), q_(q), at_execution_(at_execution) {}
  use_scope(const use_scope&) = delete;
  use_scope& operator=(const use_scope&) = delete;
  ~use_scope() {
    if (kept_) return;
    for (_cl_mem* m : mems_) rt_.unuse_mem(m);
    for (svm_allocation* b : svm_) rt_.unuse_svm(b);
  }
  cl_int mem(_cl_mem* m) {
    _cl_mem* root = m->parent ? m->parent : m;
    const bool fresh = root->device < 0;
    const cl_int s = rt_.use_mem(m, q_, at_execution_);
    if (s == CL_SUCCESS && fresh && root->device >= 0) mems_.push_back(root);
    return s;
  }
  cl_int svm(svm_allocation* b) {
    const bool fresh = !b->charged;
    const cl_int s = rt_.use_svm(b, q_);
    if (s == CL_SUCCESS && fresh) svm_.push_back(b);
    return s;
  }
  void keep() { kept_ = true; }

 private:
  mock_runtime& rt_;
  _cl_command_queue* q_;
  bool at_execution_;
  std::vector<_cl_mem*> mems_;        // roots this call charged (allocates only at a first use)
  std::vector<svm_allocation*> svm_;  // blocks this call charged
  bool kept_ = false;
};

}  // namespace mockcl

#endif  // MOCKCL_RUNTIME_USE_SCOPE_H_
