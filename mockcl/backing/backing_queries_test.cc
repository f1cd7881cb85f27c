// The query walk (issue 43): every clGetDeviceInfo query of OpenCL 3.0, asked of each mock device
// in backing mode and of POCL's device directly, and the work-group and build queries of one
// kernel built on both. Where a program sizes its launches or chooses a code path, the mock's
// devices answer as the device that computes (compute_shape.h, language.h); every difference is
// in kIntended with the reason it is meant. A difference not listed fails the test, naming the
// query and both answers; the walk's differences are printed, one line each.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mockcl/testing.h"

namespace {

struct query {
  cl_device_info param;
  const char* name;
};
#define Q(x) \
  query { x, #x }
const query kDeviceQueries[] = {
    Q(CL_DEVICE_TYPE),
    Q(CL_DEVICE_VENDOR_ID),
    Q(CL_DEVICE_MAX_COMPUTE_UNITS),
    Q(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS),
    Q(CL_DEVICE_MAX_WORK_GROUP_SIZE),
    Q(CL_DEVICE_MAX_WORK_ITEM_SIZES),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE),
    Q(CL_DEVICE_MAX_CLOCK_FREQUENCY),
    Q(CL_DEVICE_ADDRESS_BITS),
    Q(CL_DEVICE_MAX_READ_IMAGE_ARGS),
    Q(CL_DEVICE_MAX_WRITE_IMAGE_ARGS),
    Q(CL_DEVICE_MAX_MEM_ALLOC_SIZE),
    Q(CL_DEVICE_IMAGE2D_MAX_WIDTH),
    Q(CL_DEVICE_IMAGE2D_MAX_HEIGHT),
    Q(CL_DEVICE_IMAGE3D_MAX_WIDTH),
    Q(CL_DEVICE_IMAGE3D_MAX_HEIGHT),
    Q(CL_DEVICE_IMAGE3D_MAX_DEPTH),
    Q(CL_DEVICE_IMAGE_SUPPORT),
    Q(CL_DEVICE_MAX_PARAMETER_SIZE),
    Q(CL_DEVICE_MAX_SAMPLERS),
    Q(CL_DEVICE_MEM_BASE_ADDR_ALIGN),
    Q(CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE),
    Q(CL_DEVICE_SINGLE_FP_CONFIG),
    Q(CL_DEVICE_GLOBAL_MEM_CACHE_TYPE),
    Q(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE),
    Q(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE),
    Q(CL_DEVICE_GLOBAL_MEM_SIZE),
    Q(CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE),
    Q(CL_DEVICE_MAX_CONSTANT_ARGS),
    Q(CL_DEVICE_LOCAL_MEM_TYPE),
    Q(CL_DEVICE_LOCAL_MEM_SIZE),
    Q(CL_DEVICE_ERROR_CORRECTION_SUPPORT),
    Q(CL_DEVICE_PROFILING_TIMER_RESOLUTION),
    Q(CL_DEVICE_ENDIAN_LITTLE),
    Q(CL_DEVICE_AVAILABLE),
    Q(CL_DEVICE_COMPILER_AVAILABLE),
    Q(CL_DEVICE_EXECUTION_CAPABILITIES),
    Q(CL_DEVICE_QUEUE_ON_HOST_PROPERTIES),
    Q(CL_DEVICE_NAME),
    Q(CL_DEVICE_VENDOR),
    Q(CL_DEVICE_PROFILE),
    Q(CL_DEVICE_VERSION),
    Q(CL_DEVICE_EXTENSIONS),
    Q(CL_DEVICE_PLATFORM),
    Q(CL_DEVICE_DOUBLE_FP_CONFIG),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF),
    Q(CL_DEVICE_HOST_UNIFIED_MEMORY),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_INT),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF),
    Q(CL_DEVICE_OPENCL_C_VERSION),
    Q(CL_DEVICE_LINKER_AVAILABLE),
    Q(CL_DEVICE_BUILT_IN_KERNELS),
    Q(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE),
    Q(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE),
    Q(CL_DEVICE_PARENT_DEVICE),
    Q(CL_DEVICE_PARTITION_MAX_SUB_DEVICES),
    Q(CL_DEVICE_PARTITION_PROPERTIES),
    Q(CL_DEVICE_PARTITION_AFFINITY_DOMAIN),
    Q(CL_DEVICE_PARTITION_TYPE),
    Q(CL_DEVICE_REFERENCE_COUNT),
    Q(CL_DEVICE_PREFERRED_INTEROP_USER_SYNC),
    Q(CL_DEVICE_PRINTF_BUFFER_SIZE),
    Q(CL_DEVICE_IMAGE_PITCH_ALIGNMENT),
    Q(CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT),
    Q(CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS),
    Q(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE),
    Q(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES),
    Q(CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE),
    Q(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE),
    Q(CL_DEVICE_MAX_ON_DEVICE_QUEUES),
    Q(CL_DEVICE_MAX_ON_DEVICE_EVENTS),
    Q(CL_DEVICE_SVM_CAPABILITIES),
    Q(CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE),
    Q(CL_DEVICE_MAX_PIPE_ARGS),
    Q(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS),
    Q(CL_DEVICE_PIPE_MAX_PACKET_SIZE),
    Q(CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT),
    Q(CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT),
    Q(CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT),
    Q(CL_DEVICE_IL_VERSION),
    Q(CL_DEVICE_MAX_NUM_SUB_GROUPS),
    Q(CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS),
    Q(CL_DEVICE_NUMERIC_VERSION),
    Q(CL_DEVICE_EXTENSIONS_WITH_VERSION),
    Q(CL_DEVICE_ILS_WITH_VERSION),
    Q(CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION),
    Q(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES),
    Q(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES),
    Q(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT),
    Q(CL_DEVICE_OPENCL_C_ALL_VERSIONS),
    Q(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE),
    Q(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT),
    Q(CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT),
    Q(CL_DEVICE_OPENCL_C_FEATURES),
    Q(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES),
    Q(CL_DEVICE_PIPE_SUPPORT),
    Q(CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED),
    Q(CL_DRIVER_VERSION),
    Q(CL_DEVICE_HALF_FP_CONFIG),
};
#undef Q

// The queries whose answers are meant to differ from the backing device's, and why.
const std::map<cl_device_info, const char*> kIntended = {
    {CL_DEVICE_TYPE, "the preset's type (gpu or cpu): what the program is tested against"},
    {CL_DEVICE_VENDOR_ID, "the mock's identity"},
    {CL_DEVICE_NAME, "the mock's identity (the preset's name)"},
    {CL_DEVICE_VENDOR, "the mock's identity"},
    {CL_DEVICE_VERSION, "the mock's identity (same OpenCL version)"},
    {CL_DRIVER_VERSION, "the mock's identity"},
    {CL_DEVICE_OPENCL_C_VERSION, "the mock's identity (same OpenCL C version)"},
    {CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED, "the mock was never submitted to Khronos"},
    {CL_DEVICE_PLATFORM, "the mock's platform"},
    {CL_DEVICE_GLOBAL_MEM_SIZE, "capacity: the mock's configuration (reported=)"},
    {CL_DEVICE_MAX_MEM_ALLOC_SIZE, "the mock's configuration (max_alloc=)"},
    {CL_DEVICE_HOST_UNIFIED_MEMORY,
     "a GPU preset is a discrete device: its memory is the mock's, not the host's"},
    {CL_DEVICE_EXECUTION_CAPABILITIES,
     "no native kernels (clEnqueueNativeKernel is not implemented)"},
    {CL_DEVICE_SVM_CAPABILITIES,
     "no SVM atomics, and fine-grain only where POCL has it and svm=on"},
    {CL_DEVICE_EXTENSIONS,
     "the intersection with the mock's (language.h): no API extension the mock lacks "
     "(cl_khr_command_buffer, cl_khr_spir)"},
    {CL_DEVICE_EXTENSIONS_WITH_VERSION, "as CL_DEVICE_EXTENSIONS"},
    {CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
     "all-devices scope dropped: POCL's compiler does not define its feature"},
    {CL_DEVICE_OPENCL_C_FEATURES, "the features of the reported capabilities, in the mock's order"},
    {CL_DEVICE_BUILT_IN_KERNELS,
     "no built-in kernels (clCreateProgramWithBuiltInKernels is not implemented)"},
    {CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, "as CL_DEVICE_BUILT_IN_KERNELS"},
    {CL_DEVICE_PARTITION_MAX_SUB_DEVICES, "no sub-devices"},
    {CL_DEVICE_PARTITION_PROPERTIES, "no sub-devices"},
    {CL_DEVICE_PARTITION_TYPE, "a root device: an empty list (POCL answers {0})"},
    {CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, "a cl_bitfield, 8 bytes (POCL answers 4)"},
};

struct answer {
  cl_int status = CL_SUCCESS;
  std::vector<unsigned char> bytes;
  bool operator==(const answer& o) const { return status == o.status && bytes == o.bytes; }
};

template <typename F>
answer ask(F&& get) {
  answer a;
  size_t n = 0;
  a.status = get(0, nullptr, &n);
  if (a.status != CL_SUCCESS) return a;
  a.bytes.assign(n, 0);
  a.status = get(n, a.bytes.data(), nullptr);
  return a;
}

// A printable answer: a string as itself, anything else as 64-bit words in hex.
std::string show(const answer& a) {
  if (a.status != CL_SUCCESS) return "error " + std::to_string(a.status);
  const auto& b = a.bytes;
  bool text = b.size() > 1 && b.back() == 0;
  for (size_t i = 0; text && i + 1 < b.size(); ++i) text = b[i] >= 32 && b[i] < 127;
  if (text) return "'" + std::string(reinterpret_cast<const char*>(b.data())) + "'";
  std::string out = "[" + std::to_string(b.size()) + " bytes]";
  for (size_t i = 0; i < b.size() && i < 32; i += 8) {
    uint64_t v = 0;
    std::memcpy(&v, b.data() + i, std::min<size_t>(8, b.size() - i));
    char hex[24];
    std::snprintf(hex, sizeof hex, " %llx", static_cast<unsigned long long>(v));
    out += hex;
  }
  return out;
}

class BackingQueries : public ::testing::Test {
 protected:
  void SetUp() override {
    static const std::string so = mockcl::testing::mock_so_path();
    static const std::string dir = mockcl::testing::use_mock_only(so);
    ctl_ = mockcl::testing::icd_control(so);
    ctl_->reset();
    ASSERT_EQ(ctl_->configure_devices("gpu;cpu;gpu-8g:profile=nvidia"), "");
    ASSERT_EQ(ctl_->configure_backing("pocl"), "");
    d_ = mockcl::testing::loader_dispatch();
    cl_uint n = 0;
    ASSERT_EQ(d_->clGetDeviceIDs(mockcl::testing::loader_mock_platform(), CL_DEVICE_TYPE_ALL, 3,
                                 devs_, &n),
              CL_SUCCESS);
    ASSERT_EQ(n, 3u);
    pocl_ = mockcl::testing::pocl_device();
  }
  void TearDown() override { ctl_->reset(); }

  std::unique_ptr<mockcl::controller> ctl_;
  const cl_icd_dispatch* d_ = nullptr;
  cl_device_id devs_[3] = {};
  mockcl::testing::direct_device pocl_;
};

TEST_F(BackingQueries, EveryDeviceQueryIsPoclsOrAnIntendedDifference) {
  for (cl_device_id dev : devs_) {
    char name[64] = {};
    ASSERT_EQ(d_->clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, nullptr), CL_SUCCESS);
    for (const query& q : kDeviceQueries) {
      const answer mine = ask(
          [&](size_t s, void* v, size_t* r) { return d_->clGetDeviceInfo(dev, q.param, s, v, r); });
      const answer pocls = ask([&](size_t s, void* v, size_t* r) {
        return pocl_.d->clGetDeviceInfo(pocl_.device, q.param, s, v, r);
      });
      if (mine == pocls) continue;
      const auto it = kIntended.find(q.param);
      std::printf("%s on %s: POCL %s, mock %s: %s\n", q.name, name, show(pocls).c_str(),
                  show(mine).c_str(), it == kIntended.end() ? "NOT INTENDED" : it->second);
      EXPECT_NE(it, kIntended.end())
          << q.name << " on " << name << " differs from POCL's device: POCL " << show(pocls)
          << ", mock " << show(mine);
    }
  }
}

// One kernel built on the mock (backing) and on POCL directly: its work-group queries and the
// build's answers are POCL's (the work-group size is at most the device's, which is POCL's).
TEST_F(BackingQueries, KernelAndBuildQueriesArePocls) {
  const char* src =
      "__kernel void k(__global float* a, __local float* t) { t[get_local_id(0)] = "
      "a[get_global_id(0)];"
      " barrier(CLK_LOCAL_MEM_FENCE); a[get_global_id(0)] = t[0]; }";
  struct side {
    const cl_icd_dispatch* d;
    cl_device_id dev;
    cl_context ctx = nullptr;
    cl_program prog = nullptr;
    cl_kernel k = nullptr;
  } sides[2] = {{d_, devs_[0]}, {pocl_.d, pocl_.device}};
  for (side& s : sides) {
    cl_int err;
    s.ctx = s.d->clCreateContext(nullptr, 1, &s.dev, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    s.prog = s.d->clCreateProgramWithSource(s.ctx, 1, &src, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    ASSERT_EQ(s.d->clBuildProgram(s.prog, 1, &s.dev, "", nullptr, nullptr), CL_SUCCESS);
    s.k = s.d->clCreateKernel(s.prog, "k", &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  for (const query& q :
       {query{CL_KERNEL_WORK_GROUP_SIZE, "CL_KERNEL_WORK_GROUP_SIZE"},
        query{CL_KERNEL_COMPILE_WORK_GROUP_SIZE, "CL_KERNEL_COMPILE_WORK_GROUP_SIZE"},
        query{CL_KERNEL_LOCAL_MEM_SIZE, "CL_KERNEL_LOCAL_MEM_SIZE"},
        query{CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
              "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"},
        query{CL_KERNEL_PRIVATE_MEM_SIZE, "CL_KERNEL_PRIVATE_MEM_SIZE"}}) {
    answer a[2];
    for (int i = 0; i < 2; ++i)
      a[i] = ask([&](size_t z, void* v, size_t* r) {
        return sides[i].d->clGetKernelWorkGroupInfo(sides[i].k, sides[i].dev, q.param, z, v, r);
      });
    EXPECT_EQ(a[0], a[1]) << q.name << ": mock " << show(a[0]) << ", POCL " << show(a[1]);
  }
  for (const query& q : {query{CL_PROGRAM_BUILD_STATUS, "CL_PROGRAM_BUILD_STATUS"},
                         query{CL_PROGRAM_BINARY_TYPE, "CL_PROGRAM_BINARY_TYPE"},
                         query{CL_PROGRAM_BUILD_OPTIONS, "CL_PROGRAM_BUILD_OPTIONS"}}) {
    answer a[2];
    for (int i = 0; i < 2; ++i)
      a[i] = ask([&](size_t z, void* v, size_t* r) {
        return sides[i].d->clGetProgramBuildInfo(sides[i].prog, sides[i].dev, q.param, z, v, r);
      });
    EXPECT_EQ(a[0], a[1]) << q.name << ": mock " << show(a[0]) << ", POCL " << show(a[1]);
  }
  for (side& s : sides) {
    EXPECT_EQ(s.d->clReleaseKernel(s.k), CL_SUCCESS);
    EXPECT_EQ(s.d->clReleaseProgram(s.prog), CL_SUCCESS);
    EXPECT_EQ(s.d->clReleaseContext(s.ctx), CL_SUCCESS);
  }
}

}  // namespace
