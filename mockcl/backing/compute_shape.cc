#include "mockcl/backing/compute_shape.h"

#include "mockcl/api/info.h"
#include "mockcl/compiler/language.h"

namespace mockcl {
namespace {

// The vector-width queries, in compute_shape's order: char, short, int, long, float, double, half.
constexpr cl_device_info kPreferredWidth[7] = {
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,  CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,   CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF};
constexpr cl_device_info kNativeWidth[7] = {
    CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,  CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,   CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF};
constexpr int kDouble = 5, kHalf = 6;

template <typename T>
bool query(const cl_icd_dispatch& d, cl_device_id dev, cl_device_info param, T& out) {
  size_t got = 0;
  return d.clGetDeviceInfo(dev, param, sizeof out, &out, &got) == CL_SUCCESS && got == sizeof out;
}

}  // namespace

compute_shape mock_shape(bool gpu) {
  compute_shape s;
  s.compute_units = gpu ? 32 : 4;
  s.max_work_group = 1024;
  s.max_work_items[0] = s.max_work_items[1] = 1024;
  s.max_work_items[2] = 64;
  s.preferred_multiple = 32;
  s.local_mem_size = 48 << 10;
  s.local_mem_type = CL_LOCAL;
  s.max_parameter_size = 4096;
  s.max_constant_buffer = 64 << 10;
  s.max_constant_args = 8;
  s.clock_mhz = 1000;
  s.single_fp_config = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
  s.double_fp_config = double_fp_config(mock_language());
  s.cache_type = CL_READ_WRITE_CACHE;
  s.cacheline = 64;
  s.cache_size = 1 << 20;
  s.printf_buffer = 1 << 20;
  const cl_uint widths[7] = {4, 2, 1, 1, 1, 1, 1};
  for (int i = 0; i < 7; ++i) s.preferred_width[i] = s.native_width[i] = widths[i];
  return s;
}

std::optional<compute_shape> read_shape(const cl_icd_dispatch& d, cl_device_id dev,
                                        const char*& error) {
  compute_shape s;
  error = nullptr;
  if (!query(d, dev, CL_DEVICE_MAX_COMPUTE_UNITS, s.compute_units) || s.compute_units == 0)
    error = "CL_DEVICE_MAX_COMPUTE_UNITS";
  else if (!query(d, dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, s.max_work_group) || s.max_work_group == 0)
    error = "CL_DEVICE_MAX_WORK_GROUP_SIZE";
  else if (!query(d, dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, s.max_work_items) ||
           s.max_work_items[0] == 0)
    error = "CL_DEVICE_MAX_WORK_ITEM_SIZES";
  else if (!query(d, dev, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, s.preferred_multiple))
    error = "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE";
  else if (!query(d, dev, CL_DEVICE_LOCAL_MEM_SIZE, s.local_mem_size) ||
           !query(d, dev, CL_DEVICE_LOCAL_MEM_TYPE, s.local_mem_type))
    error = "CL_DEVICE_LOCAL_MEM_SIZE";
  else if (!query(d, dev, CL_DEVICE_MAX_PARAMETER_SIZE, s.max_parameter_size) ||
           !query(d, dev, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, s.max_constant_buffer) ||
           !query(d, dev, CL_DEVICE_MAX_CONSTANT_ARGS, s.max_constant_args))
    error = "CL_DEVICE_MAX_PARAMETER_SIZE";
  else if (!query(d, dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, s.clock_mhz))
    error = "CL_DEVICE_MAX_CLOCK_FREQUENCY";
  else if (!query(d, dev, CL_DEVICE_SINGLE_FP_CONFIG, s.single_fp_config))
    error = "CL_DEVICE_SINGLE_FP_CONFIG";
  else if (!query(d, dev, CL_DEVICE_DOUBLE_FP_CONFIG, s.double_fp_config))
    error = "CL_DEVICE_DOUBLE_FP_CONFIG";
  else if (!query(d, dev, CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, s.cache_type) ||
           !query(d, dev, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, s.cacheline) ||
           !query(d, dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, s.cache_size))
    error = "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE";
  else if (!query(d, dev, CL_DEVICE_PRINTF_BUFFER_SIZE, s.printf_buffer))
    error = "CL_DEVICE_PRINTF_BUFFER_SIZE";
  for (int i = 0; i < 7 && !error; ++i)
    if (!query(d, dev, kPreferredWidth[i], s.preferred_width[i]) ||
        !query(d, dev, kNativeWidth[i], s.native_width[i]))
      error = "CL_DEVICE_PREFERRED_VECTOR_WIDTH_*";
  if (error) return std::nullopt;
  return s;
}

std::optional<cl_int> shape_info(const compute_shape& s, bool fp64, bool fp16, cl_device_info param,
                                 size_t size, void* value, size_t* size_ret) {
  auto v = [&](const auto& x) { return set_info_v(size, value, size_ret, x); };
  for (int i = 0; i < 7; ++i) {
    const bool absent = (i == kDouble && !fp64) || (i == kHalf && !fp16);
    if (param == kPreferredWidth[i]) return v(absent ? cl_uint{0} : s.preferred_width[i]);
    if (param == kNativeWidth[i]) return v(absent ? cl_uint{0} : s.native_width[i]);
  }
  switch (param) {
    case CL_DEVICE_MAX_COMPUTE_UNITS:
      return v(s.compute_units);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
      return v(s.max_work_group);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES:
      return set_info(size, value, size_ret, s.max_work_items, sizeof s.max_work_items);
    case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
      return v(s.preferred_multiple);
    case CL_DEVICE_LOCAL_MEM_SIZE:
      return v(s.local_mem_size);
    case CL_DEVICE_LOCAL_MEM_TYPE:
      return v(s.local_mem_type);
    case CL_DEVICE_MAX_PARAMETER_SIZE:
      return v(s.max_parameter_size);
    case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
      return v(s.max_constant_buffer);
    case CL_DEVICE_MAX_CONSTANT_ARGS:
      return v(s.max_constant_args);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
      return v(s.clock_mhz);
    case CL_DEVICE_SINGLE_FP_CONFIG:
      return v(s.single_fp_config);
    case CL_DEVICE_DOUBLE_FP_CONFIG:
      return v(fp64 ? s.double_fp_config : cl_device_fp_config{0});
    case CL_DEVICE_GLOBAL_MEM_CACHE_TYPE:
      return v(s.cache_type);
    case CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE:
      return v(s.cacheline);
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
      return v(s.cache_size);
    case CL_DEVICE_PRINTF_BUFFER_SIZE:
      return v(s.printf_buffer);
    default:
      return std::nullopt;
  }
}

}  // namespace mockcl
