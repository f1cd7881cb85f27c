#include "pool/opencl/host_pinned_pool.h"

#include <string>

#include "pool/opencl/cl_error.h"

namespace clpool::opencl {

event_ref pinned_memory::write_to(cl_command_queue queue, cl_mem dst, std::uint64_t dst_offset,
                                  std::uint64_t bytes, bool blocking) {
  return transfer(true, queue, dst, dst_offset, bytes, blocking);
}

event_ref pinned_memory::read_from(cl_command_queue queue, cl_mem src, std::uint64_t src_offset,
                                   std::uint64_t bytes, bool blocking) {
  return transfer(false, queue, src, src_offset, bytes, blocking);
}

event_ref pinned_memory::transfer(bool to_device, cl_command_queue queue, cl_mem buffer,
                                  std::uint64_t offset, std::uint64_t bytes, bool blocking) {
  const char* who = to_device ? "pinned_memory::write_to" : "pinned_memory::read_from";
  if (!has_block()) throw invalid_use(std::string(who) + ": the block was released");
  if (queue == nullptr) throw invalid_use(std::string(who) + ": null queue");
  if (buffer == nullptr) throw invalid_use(std::string(who) + ": null buffer");
  if (bytes == whole) bytes = size();
  if (bytes > size()) {
    throw invalid_use(std::string(who) + ": " + std::to_string(bytes) +
                      " bytes exceed the block's " + std::to_string(size()));
  }
  if (buffer == mem()) {
    throw invalid_use(std::string(who) +
                      ": the block's own buffer is mapped and cannot be used by a command");
  }
  // Completed transfers need no waiting: drop them so a long-lived block holds few events.
  std::erase_if(transfers_, [](const event_ref& e) {
    cl_int s = CL_QUEUED;
    return clGetEventInfo(e.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s, nullptr) ==
               CL_SUCCESS &&
           (s == CL_COMPLETE || s < 0);
  });
  cl_event ev = nullptr;
  const cl_bool block = blocking ? CL_TRUE : CL_FALSE;
  const auto off = static_cast<size_t>(offset);
  const auto n = static_cast<size_t>(bytes);
  const cl_int status =
      to_device ? clEnqueueWriteBuffer(queue, buffer, block, off, n, data(), 0, nullptr, &ev)
                : clEnqueueReadBuffer(queue, buffer, block, off, n, data(), 0, nullptr, &ev);
  throw_if_failed(status, to_device ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer",
                  std::to_string(bytes) + " bytes from pinned memory");
  event_ref event = event_ref::adopt(ev);
  if (!blocking) transfers_.push_back(event_ref::retain(ev));
  return event;
}

void pinned_memory::release() noexcept {
  for (const event_ref& e : transfers_) {
    cl_event ev = e.get();
    clWaitForEvents(1, &ev);  // a failed transfer has ended too
  }
  transfers_.clear();
  block_.release();
}

}  // namespace clpool::opencl
