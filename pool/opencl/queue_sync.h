// Ordering work on a pooled block across command queues without blocking the host.
//
// A pooled block remembers, in its handle, the in-order queue on which its last user enqueued
// commands (an owned reference, or null when no work is pending). When the block is handed to a
// new user on another queue B, B must not start before those commands complete: a marker is
// enqueued on the old queue A and B waits on it with a barrier. The host does not wait. With no
// new queue (host use), the host waits for A.
#ifndef CLPOOL_POOL_OPENCL_QUEUE_SYNC_H_
#define CLPOOL_POOL_OPENCL_QUEUE_SYNC_H_

// Installed headers are used outside Bazel: pick OpenCL 3.0 unless the includer chose.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

namespace clpool::opencl {

// Makes `to` wait for every command enqueued so far on `pending`; with `to` == nullptr the host
// waits. `pending` is an owned reference (or null: nothing to do). On success the
// reference is released and `pending` becomes null; when `to == pending` nothing is enqueued (an
// in-order queue already orders the work); with `to` == nullptr it calls wait_for_queue. Every
// event it creates is released. On failure it throws cl_error and leaves `pending` unchanged, so
// the block keeps its ordering obligation.
void hand_over(cl_command_queue& pending, cl_command_queue to);

// Like hand_over, but returns an owned event that completes when every command enqueued so far
// on `pending` completes, instead of making a queue wait (for a wait list, e.g. clEnqueueSVMFree).
// Returns nullptr when `pending` is null. Does not release `pending`. Throws cl_error on failure.
cl_event marker_after(cl_command_queue pending);

// Makes every command enqueued later on `queue` wait for every command enqueued on it so far,
// without blocking the host: a barrier with no wait list, which orders an out-of-order queue too.
// For a block reused on the out-of-order queue its last user's commands were enqueued on: that
// queue may otherwise run the new user's writes before the old user's reads. Throws cl_error.
void order_after_enqueued(cl_command_queue queue);

// Blocks the host until every command enqueued so far on `queue` completes: a marker and
// clWaitForEvents (falling back to clFinish if the marker cannot be enqueued). Unlike clFinish it
// does not wait for work enqueued later by other threads. Throws cl_error if waiting fails.
void wait_for_queue(cl_command_queue queue);

}  // namespace clpool::opencl

#endif  // CLPOOL_POOL_OPENCL_QUEUE_SYNC_H_
