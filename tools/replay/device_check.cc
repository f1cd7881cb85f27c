#include "tools/replay/device_check.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <vector>

#include "common/cl_status.h"
#include "pool/opencl/cl_error.h"

namespace clpool::replay_cli {

namespace {

// One buffer, created and first used; its status and where it was refused, if it was.
struct attempt {
  cl_mem mem = nullptr;
  cl_int status = CL_SUCCESS;
  refusal_point where = refusal_point::creation;
};

attempt create_and_use(cl_context context, cl_command_queue queue, std::uint64_t bytes) {
  attempt a;
  a.mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &a.status);
  if (a.status != CL_SUCCESS) return a;
  a.where = refusal_point::first_use;
  cl_event done = nullptr;
  a.status = clEnqueueMigrateMemObjects(queue, 1, &a.mem, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                        0, nullptr, &done);
  if (a.status != CL_SUCCESS) return a;
  a.where = refusal_point::execution;
  cl_int finish = clFinish(queue);
  cl_int event_status = CL_SUCCESS;
  clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof event_status, &event_status,
                 nullptr);
  clReleaseEvent(done);
  a.status = event_status < 0 ? event_status : finish;
  return a;
}

}  // namespace

std::string fill_result::describe() const {
  static constexpr const char* calls[] = {"clCreateBuffer", "clEnqueueMigrateMemObjects",
                                          "the first use's event"};
  std::string point(to_string(where));  // in words: "first use"
  std::replace(point.begin(), point.end(), '_', ' ');
  return point + " (" + calls[static_cast<int>(where)] + ": " + std::to_string(status) + " " +
         opencl::status_name(status) + ")";
}

fill_result fill_until_refused(cl_context context, cl_command_queue queue, std::uint64_t limit,
                               std::uint64_t max_chunk) {
  fill_result r;
  r.limit = limit;
  std::vector<cl_mem> held;
  const auto release_all = [&] {
    for (cl_mem m : held) clReleaseMemObject(m);
    held.clear();
    clFinish(queue);
  };
  // Powers of two, as the probe fills: every buffer above the device's page is then a whole
  // number of pages, so two fills of one window agree to the byte and the total is the device's.
  std::uint64_t chunk = std::bit_floor(std::max<std::uint64_t>(std::min(max_chunk, limit), 1));
  try {
    for (std::uint64_t attempts = 0; r.accepted < limit; ++attempts) {
      if (attempts == 200000) {
        throw std::runtime_error(
            "checking the device's memory: 200000 buffers without a limit "
            "in sight; the device's answers follow no pattern");
      }
      const std::uint64_t bytes = std::min(chunk, limit - r.accepted);
      const attempt a = create_and_use(context, queue, bytes);
      if (a.status == CL_SUCCESS) {
        held.push_back(a.mem);
        r.accepted += bytes;
        ++r.buffers;
        continue;
      }
      if (a.mem != nullptr) clReleaseMemObject(a.mem);
      if (!common::is_out_of_memory_status(a.status)) {
        opencl::throw_if_failed(
            a.status, "checking the device's memory",
            std::to_string(bytes) + "-byte buffer, " + std::string(to_string(a.where)));
      }
      if (!r.refused) {
        r.refused = true;
        r.where = a.where;
        r.status = a.status;
      }
      if (bytes == 1) break;  // not even a byte fits: the device's limit, to the byte
      chunk = bytes / 2;
    }
  } catch (...) {
    release_all();
    throw;
  }
  release_all();
  return r;
}

above_max_alloc ask_above_max_alloc(cl_context context, std::uint64_t max_alloc) {
  cl_int s = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, max_alloc + 1, nullptr, &s);
  if (m != nullptr) {
    clReleaseMemObject(m);
    return above_max_alloc::accepted;
  }
  if (s == CL_INVALID_BUFFER_SIZE) return above_max_alloc::refused_for_size;
  if (common::is_out_of_memory_status(s)) return above_max_alloc::unknown;
  opencl::throw_if_failed(
      s, "clCreateBuffer",
      std::to_string(max_alloc + 1) + " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE + 1)");
  return above_max_alloc::unknown;
}

}  // namespace clpool::replay_cli
