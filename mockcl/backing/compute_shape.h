// What a mock device reports about its compute resources, the queries a program sizes its launches
// and chooses its code paths by: compute units, work-group and work-item limits, the preferred
// work-group multiple, local memory, parameter and constant limits, clock, vector widths, the
// floating-point configurations, the global memory cache and the printf buffer.
//
// With no backing device they are the mock's own (a GPU or CPU preset's). In backing mode POCL's
// device runs every kernel, so they are POCL's device's, read once when POCL is loaded: a launch
// sized by them is one POCL runs, and a program does the work it would do on POCL (the GPU
// preset's 32 compute units made hashcat and clpeak size their launches for a device 16 times
// wider than the one computing). Memory sizes (capacity, max alloc) stay the mock's configuration.
#ifndef MOCKCL_BACKING_COMPUTE_SHAPE_H_
#define MOCKCL_BACKING_COMPUTE_SHAPE_H_

#include <CL/cl_icd.h>

#include <optional>

namespace mockcl {

struct compute_shape {
  cl_uint compute_units = 0;
  size_t max_work_group = 0;      // CL_DEVICE_MAX_WORK_GROUP_SIZE
  size_t max_work_items[3] = {};  // CL_DEVICE_MAX_WORK_ITEM_SIZES (three dimensions)
  size_t preferred_multiple = 0;  // CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
  cl_ulong local_mem_size = 0;
  cl_device_local_mem_type local_mem_type = CL_LOCAL;
  size_t max_parameter_size = 0;
  cl_ulong max_constant_buffer = 0;
  cl_uint max_constant_args = 0;
  cl_uint clock_mhz = 0;
  cl_device_fp_config single_fp_config = 0;
  cl_device_fp_config double_fp_config = 0;  // Reported only where the language has fp64.
  cl_device_mem_cache_type cache_type = CL_NONE;
  cl_uint cacheline = 0;
  cl_ulong cache_size = 0;
  size_t printf_buffer = 0;
  // Preferred and native vector widths of char, short, int, long, float, double, half (the last
  // two are 0 where the language has no fp64 / fp16: language.h decides).
  cl_uint preferred_width[7] = {};
  cl_uint native_width[7] = {};
};

// The mock's own shape: a GPU's (32 compute units, work-groups of 1024, 48 KiB local memory) or a
// CPU's (4 units).
compute_shape mock_shape(bool gpu);

// A real device's (POCL's), read through its dispatch table; nullopt, with `error` naming the
// query, if one fails or makes no sense (no compute unit, a work-group size of 0, work-item sizes
// that cannot hold a work-group).
std::optional<compute_shape> read_shape(const cl_icd_dispatch& d, cl_device_id device,
                                        const char*& error);

// Answers `param` from `shape` (clGetDeviceInfo's size protocol), or nullopt if it is not one of
// the shape's queries. The double and half widths (and the double configuration) are 0 unless
// `fp64` / `fp16` (language.h).
std::optional<cl_int> shape_info(const compute_shape& shape, bool fp64, bool fp16,
                                 cl_device_info param, size_t size, void* value, size_t* size_ret);

// What a mock device of that type reports now (api_platform.cc): mock_shape(gpu), or in backing
// mode POCL's device's. Settles MOCKCL_BACKING's default, as a context does.
const compute_shape& device_shape(bool gpu);

}  // namespace mockcl

#endif  // MOCKCL_BACKING_COMPUTE_SHAPE_H_
