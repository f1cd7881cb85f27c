#include "pool/opencl/queue_sync.h"

#include "pool/opencl/cl_error.h"
#include "pool/opencl/cl_object.h"

namespace clpool::opencl {

cl_event marker_after(cl_command_queue pending) {
  if (pending == nullptr) return nullptr;
  cl_event marker = nullptr;
  throw_if_failed(clEnqueueMarkerWithWaitList(pending, 0, nullptr, &marker),
                  "clEnqueueMarkerWithWaitList", "marker on the block's previous queue");
  event_ref owned = event_ref::adopt(marker);
  // Another queue will wait for this marker: make sure the old queue's work gets submitted.
  throw_if_failed(clFlush(pending), "clFlush", "the block's previous queue");
  return owned.release_ownership();
}

void order_after_enqueued(cl_command_queue queue) {
  throw_if_failed(clEnqueueBarrierWithWaitList(queue, 0, nullptr, nullptr),
                  "clEnqueueBarrierWithWaitList", "a reused block's out-of-order queue");
}

void wait_for_queue(cl_command_queue queue) {
  cl_event marker = nullptr;
  if (clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker) != CL_SUCCESS) {
    throw_if_failed(clFinish(queue), "clFinish", "waiting for a queue");
    return;
  }
  event_ref owned = event_ref::adopt(marker);
  throw_if_failed(clWaitForEvents(1, &marker), "clWaitForEvents", "waiting for a queue");
}

void hand_over(cl_command_queue& pending, cl_command_queue to) {
  if (pending == nullptr) return;
  if (to == pending) {
    clReleaseCommandQueue(pending);
    pending = nullptr;
    return;
  }
  if (to == nullptr) {
    wait_for_queue(pending);
  } else {
    event_ref marker = event_ref::adopt(marker_after(pending));
    cl_event wait = marker.get();
    throw_if_failed(clEnqueueBarrierWithWaitList(to, 1, &wait, nullptr),
                    "clEnqueueBarrierWithWaitList",
                    "new queue waiting for the block's previous queue");
  }
  clReleaseCommandQueue(pending);
  pending = nullptr;
}

}  // namespace clpool::opencl
