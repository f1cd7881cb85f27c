// Asking a real OpenCL device whether it enforces its memory, before trusting its answers.
//
// A replay on --device opencl is only as true as the device's refusals: a device that accepts
// what does not fit (POCL, whose memory is the host's) would say "replayed cleanly" at any
// capacity. fill_until_refused() holds buffers the way the probe counts them (created, first
// used with clEnqueueMigrateMemObjects, its event ended without error) until the device refuses
// one or `limit` bytes are held, then releases them all. A device that accepted `limit` bytes
// never refused; one that refused says where (creation, first use, execution) and with which
// status. Two fills of the same window give the same total on a device that nothing else uses,
// which is how a change in free memory during a replay is caught.
#ifndef CLPOOL_TOOLS_REPLAY_DEVICE_CHECK_H_
#define CLPOOL_TOOLS_REPLAY_DEVICE_CHECK_H_

#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "device_model/profile.h"

namespace clpool::replay_cli {

// Where a device reports running out of memory, in the probe's and the profiles' terms: here
// creation is clCreateBuffer refused, first_use clEnqueueMigrateMemObjects refused at the
// enqueue, execution the migrate accepted but its event ended in an error.
using device_model::refusal_point;

struct fill_result {
  std::uint64_t limit = 0;     // what the fill was allowed to hold
  std::uint64_t accepted = 0;  // bytes held when the fill ended
  std::uint64_t buffers = 0;   // buffers the device accepted
  bool refused = false;        // the device refused a buffer before `limit` was reached
  refusal_point where = refusal_point::creation;  // the first refusal's
  cl_int status = CL_SUCCESS;                     // and its status
  std::string describe() const;  // "first use (clEnqueueMigrateMemObjects: -4 CL_MEM_...)"
  // The device refused before holding `limit` bytes: it enforces a size below the limit.
  bool enforced() const { return accepted < limit; }
};

// Fills the device through `queue` (on `context`) with buffers of at most `max_chunk` bytes,
// halving the size after each refusal, until a 1-byte buffer is refused (the device's limit,
// to the byte) or `limit` bytes are held; then releases every buffer. Throws std::runtime_error
// for a status that is not an out-of-memory, and after 200,000 buffers (a device whose answers
// follow no pattern).
fill_result fill_until_refused(cl_context context, cl_command_queue queue, std::uint64_t limit,
                               std::uint64_t max_chunk);

// How the device answers a buffer one byte above its CL_DEVICE_MAX_MEM_ALLOC_SIZE, created and
// not used (the probe's check, tools/probe/measure.cc): refused for its size
// (CL_INVALID_BUFFER_SIZE), accepted (NVIDIA's drivers do), or refused for memory, which says
// nothing about the limit. Throws std::runtime_error for any other status.
enum class above_max_alloc { refused_for_size, accepted, unknown };
above_max_alloc ask_above_max_alloc(cl_context context, std::uint64_t max_alloc);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_DEVICE_CHECK_H_
