// The one platform call the pool needs: a memory barrier forced on every thread of the process.
//
// Why: it lets a lock's common path (one thread using a pool) run with no atomic
// read-modify-write, by moving the cost of the Dekker-style fence to the rare thread that revokes
// the bias (biased_lock.h). On Linux this is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED).
#ifndef CLPOOL_SYNC_PROCESS_BARRIER_H_
#define CLPOOL_SYNC_PROCESS_BARRIER_H_

namespace clpool::detail {

// True when process_barrier() works here. The first call registers the process with the kernel;
// later calls return the cached answer. Where it is false, biased_lock never biases.
bool process_barrier_available() noexcept;

// Returns once every thread of the process has executed a full memory barrier (or was not
// running). Precondition: process_barrier_available().
void process_barrier() noexcept;

}  // namespace clpool::detail

#endif  // CLPOOL_SYNC_PROCESS_BARRIER_H_
