// The release-ordering checker over mockcl's executed-command log, shared by mockcl_pool_test
// (rapidcheck properties) and //fuzz:svm_ordering_fuzzer.
//
// A pooled block passes from user to user (allocation, then release, then the next allocation
// that gets the same block). The rule: no command of a later user on the block starts before
// every command of an earlier user on it has ended; an SVM free command (clEnqueueSVMFree) starts
// only after every use of its block has ended; and a real free mockcl records (FreeRecord) never
// happens while a use of the block is running.
#ifndef CLPOOL_POOL_OPENCL_TESTING_COMMAND_ORDER_H_
#define CLPOOL_POOL_OPENCL_TESTING_COMMAND_ORDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mockcl/runtime/snapshot.h"

namespace clpool::opencl::testing {

struct order_check {
  std::string violation;  // empty when every rule holds; else the first violation, readable
  int svm_frees = 0;      // svm_free commands seen
  explicit operator bool() const { return violation.empty(); }
};

// `commands`: mockcl's executed commands (any order; sorted by id here). `use_kinds`: the command
// kinds that are uses of a block ("fill", "svm_memfill", "kernel", "copy", "svm_memcpy", ...).
// A use command's blocks are its SVM ranges' addresses (`svm`) or its mem ids (otherwise).
// `labels[key]`: in enqueue order, the user (an increasing number per allocation) of each use
// command enqueued on block `key`. With `complete` every labelled use must have executed (the
// log after every queue finished); without it, the check runs on what executed so far (commands
// of one block execute in enqueue order when the ordering is right, so the labels still match).
// `frees`: the real frees; each must not fall inside a use of its block (nullptr: skipped).
// Every executed command must have completed with status 0.
order_check check_command_order(const std::vector<mockcl::command_record>& commands,
                                const std::vector<std::string>& use_kinds, bool svm,
                                const std::map<std::uint64_t, std::vector<int>>& labels,
                                bool complete = true,
                                const std::vector<mockcl::free_record>* frees = nullptr);

}  // namespace clpool::opencl::testing

#endif  // CLPOOL_POOL_OPENCL_TESTING_COMMAND_ORDER_H_
