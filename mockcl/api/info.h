// clGet*Info's size protocol, shared by every entry point that answers a query: a value is
// written only if the caller's buffer is large enough, and its size is reported either way.
#ifndef MOCKCL_API_INFO_H_
#define MOCKCL_API_INFO_H_

#include <CL/cl.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace mockcl {

// Writes `n` bytes of `data` to `value` (if non-null; CL_INVALID_VALUE if `size` < n) and n to
// `size_ret` (if non-null).
inline cl_int set_info(size_t size, void* value, size_t* size_ret, const void* data, size_t n) {
  if (value) {
    if (size < n) return CL_INVALID_VALUE;
    if (n) std::memcpy(value, data, n);
  }
  if (size_ret) *size_ret = n;
  return CL_SUCCESS;
}
template <typename T>
cl_int set_info_v(size_t size, void* value, size_t* size_ret, const T& v) {
  return set_info(size, value, size_ret, &v, sizeof(T));
}
// A string value, its terminating NUL included.
inline cl_int set_info_s(size_t size, void* value, size_t* size_ret, const std::string& s) {
  return set_info(size, value, size_ret, s.c_str(), s.size() + 1);
}

}  // namespace mockcl

#endif  // MOCKCL_API_INFO_H_
