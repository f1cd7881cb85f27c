// OpenCL statuses: the one table of their names, and the one rule for which of them mean "the
// device (or the host behind it) ran out of memory". The pool's OpenCL allocators, mockcl, the
// device model, the layer, clpool_probe and clpool_replay all ask here.
//
// OpenCL-free on purpose (the codes are spelled as numbers, checked against CL/cl.h by
// cl_status_test), so that the device model and the pool core can use it without the headers.
#ifndef CLPOOL_COMMON_CL_STATUS_H_
#define CLPOOL_COMMON_CL_STATUS_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace clpool::common {

inline constexpr std::int32_t status_mem_object_allocation_failure =
    -4;                                                          // CL_MEM_OBJECT_ALLOCATION_FAILURE
inline constexpr std::int32_t status_out_of_resources = -5;      // CL_OUT_OF_RESOURCES
inline constexpr std::int32_t status_out_of_host_memory = -6;    // CL_OUT_OF_HOST_MEMORY
inline constexpr std::int32_t status_invalid_buffer_size = -61;  // CL_INVALID_BUFFER_SIZE

// True for the three statuses real drivers use when there is no room: NVIDIA and AMD answer -4,
// Intel's NEO -6, and some drivers -5 for the same condition (docs/device-facts.md).
//
// CL_INVALID_BUFFER_SIZE (-61) is not out-of-memory: it is the answer to a size of 0 and to a
// request above CL_DEVICE_MAX_MEM_ALLOC_SIZE on a device that enforces that limit, and both are
// wrong requests that no amount of freed memory would satisfy. A pool must not free its held
// blocks and retry on it, and a trace must not call it an out-of-memory.
constexpr bool is_out_of_memory_status(std::int32_t status) noexcept {
  return status == status_mem_object_allocation_failure || status == status_out_of_resources ||
         status == status_out_of_host_memory;
}

// True when a device refused a non-empty request for its size alone: CL_INVALID_BUFFER_SIZE for
// `bytes` > 0 is how POCL and ROCm answer a request above CL_DEVICE_MAX_MEM_ALLOC_SIZE. Not an
// out-of-memory (see above), but a failed request that a recording of the program keeps.
constexpr bool is_size_refusal(std::int32_t status, std::uint64_t bytes) noexcept {
  return status == status_invalid_buffer_size && bytes > 0;
}

// The symbolic name of a status, e.g. "CL_INVALID_BUFFER_SIZE" for -61: every status of the
// OpenCL 3.0 headers and the common extension codes. Unknown codes give "CL_UNKNOWN_ERROR".
// The returned text is static (never dangles, never null).
const char* status_name(std::int32_t status) noexcept;

// The code of a status named as status_name() spells it; nothing for any other text
// (including "CL_UNKNOWN_ERROR").
std::optional<std::int32_t> status_from_name(std::string_view name) noexcept;

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_CL_STATUS_H_
