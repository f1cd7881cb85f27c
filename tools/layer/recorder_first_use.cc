// The recorder's first-use charge (first_use.h's calls): with a profile whose device commits at
// first use, a block is charged to the budget by the first enqueue that uses it, and that enqueue
// fails with the profile's status when it does not fit, or when a first-use failure is injected.
#include "tools/layer/recorder.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace clpool::layer {

int recorder::first_use(block_info& block, const char* call, bool* newly_charged) {
  std::lock_guard lock(mutex_);
  bool charged = false;
  const int status = first_use_locked(block, call, charged);
  if (newly_charged != nullptr) *newly_charged = charged;
  return status;
}

void recorder::undo_first_use(block_info& block) {
  std::lock_guard lock(mutex_);
  undo_first_use_locked(block);
}

void recorder::undo_first_use_locked(block_info& block) {
  if (!block.charged) return;
  budget_.release(block.where, block.size);
  block.charged = false;
}

std::map<const void*, block_info>::iterator recorder::svm_containing_locked(const void* pointer) {
  auto it = svm_blocks_.upper_bound(pointer);
  if (it == svm_blocks_.begin()) return svm_blocks_.end();
  --it;
  const auto offset =
      reinterpret_cast<std::uintptr_t>(pointer) - reinterpret_cast<std::uintptr_t>(it->first);
  return offset < std::max<std::uint64_t>(it->second.size, 1) ? it : svm_blocks_.end();
}

int recorder::first_use_svm(const void* pointer, const char* call, const void*& newly_charged) {
  newly_charged = nullptr;
  std::lock_guard lock(mutex_);
  auto it = svm_containing_locked(pointer);
  if (it == svm_blocks_.end()) return 0;  // not an SVM block the layer handed out
  bool charged = false;
  const int status = first_use_locked(it->second, call, charged);
  if (charged) newly_charged = it->first;
  return status;
}

void recorder::undo_first_use_svm(const void* start) {
  std::lock_guard lock(mutex_);
  auto it = svm_blocks_.find(start);
  if (it != svm_blocks_.end()) undo_first_use_locked(it->second);
}

int recorder::first_use_locked(block_info& block, const char* call, bool& newly_charged) {
  newly_charged = false;
  if (!block.counted || block.charged) return 0;
  ++first_uses_;
  // The trace's first use (version 4), whether the device takes it or not: a replay commits the
  // block here, and fails here where this run did.
  write_locked(trace::trace_action::use, block, 0);
  const bool injected = fails_first_use(first_uses_);
  const bool still_full = !injected && full_from_ != 0 && block.size >= full_from_;
  if (injected && until_free()) full_from_ = std::max<std::uint64_t>(block.size, 1);
  if (report_.is_open()) {
    const std::string point = std::to_string(first_uses_) + " " + std::to_string(block.id) + " " +
                              std::to_string(block.stack) + " " + call;
    report_.line("first_use " + point);
    if (injected) report_.line("injected first_use " + point);
  }
  if (!injected && !still_full && budget_.try_commit(block.size, block.where)) {
    block.charged = true;
    newly_charged = true;
    return 0;
  }
  const int status = settings_.profile->oom_status;
  if (sink_ != nullptr && !sink_failed_) {
    const std::string why =
        injected ? (settings_.fail_first_use_nth && first_uses_ == *settings_.fail_first_use_nth
                        ? "CLPOOL_LAYER_FAIL_FIRST_USE_NTH=" + std::to_string(first_uses_)
                        : std::string("an injected failure (clpool_layer_arm)"))
        : still_full
            ? std::string("CLPOOL_LAYER_FAIL_UNTIL_FREE: nothing freed since the injected failure")
            : "budget " + std::to_string(budget_.capacity()) + " bytes, " +
                  std::to_string(budget_.committed()) + " committed";
    const std::string what = "first use of id " + std::to_string(block.id) + " (" +
                             std::to_string(block.size) + " bytes) by " + call + ": status " +
                             std::to_string(status) + " from the layer: " + why + " (" +
                             settings_.profile->name + " profile)";
    if (!sink_->comment("failure", what)) {
      sink_failed_locked(next_seq_);
    } else {
      write_sites_locked(/*symbolize=*/true);  // as after an alloc_failed (write_locked)
    }
  }
  return status;
}

}  // namespace clpool::layer
