// Programs from binaries through the entry points (mode from MOCKCL_BACKING, the test runs in
// both): CL_PROGRAM_BINARIES gives mockcl's container, from which clCreateProgramWithBinary
// rebuilds the same kernels with the same signatures; a corrupt or foreign binary is
// CL_INVALID_BINARY for its device, never a crash. In-process and through the loader.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mockcl/battery_fixture.h"
#include "mockcl/compiler/program_binary.h"

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names

template <typename T>
class ProgramBinary : public Battery<T> {
 protected:
  cl_program Built(const char* src, const char* options = "") {
    cl_int err;
    cl_program p = this->d_->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(this->d_->clBuildProgram(p, 0, nullptr, options, nullptr, nullptr), CL_SUCCESS);
    return p;
  }
  std::vector<unsigned char> Binary(cl_program p) {
    size_t size = 0;
    EXPECT_EQ(this->d_->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
              CL_SUCCESS);
    std::vector<unsigned char> bin(size);
    unsigned char* ptr = bin.data();
    EXPECT_EQ(this->d_->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr),
              CL_SUCCESS);
    return bin;
  }
  cl_program FromBinary(const std::vector<unsigned char>& bin, cl_int* status, cl_int* err) {
    const unsigned char* ptr = bin.data();
    const size_t size = bin.size();
    return this->d_->clCreateProgramWithBinary(this->ctx_, 1, this->devices_.data(), &size, &ptr,
                                               status, err);
  }
  // A kernel's argument count and each argument's type name.
  std::string Describe(cl_kernel k) {
    cl_uint n = 0;
    EXPECT_EQ(this->d_->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr), CL_SUCCESS);
    std::string out = std::to_string(n);
    for (cl_uint i = 0; i < n; ++i) {
      char name[64] = {};
      EXPECT_EQ(
          this->d_->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, nullptr),
          CL_SUCCESS);
      out += std::string(" ") + name;
    }
    return out;
  }
};
TYPED_TEST_SUITE(ProgramBinary, Backends, BackendNames);

constexpr const char* kSource =
    "__kernel void scale(__global float* a, const float s, int n) { a[get_global_id(0)] *= s; }\n"
    "__kernel void fill(__global int* a, int v) { a[get_global_id(0)] = v; }\n";

TYPED_TEST(ProgramBinary, RebuildsTheSameKernelsWithTheSameSignatures) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_program p = this->Built(kSource, "-cl-std=CL1.2 -cl-kernel-arg-info");
  const std::vector<unsigned char> bin = this->Binary(p);
  ASSERT_GT(bin.size(), 8u);
  cl_int status = 1, err = 1;
  cl_program q = this->FromBinary(bin, &status, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(status, CL_SUCCESS);
  ASSERT_EQ(d->clBuildProgram(q, 0, nullptr, "-cl-std=CL1.2 -cl-kernel-arg-info", nullptr, nullptr),
            CL_SUCCESS);
  char names[64] = {};
  ASSERT_EQ(d->clGetProgramInfo(q, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr),
            CL_SUCCESS);
  EXPECT_NE(std::string(names).find("scale"), std::string::npos) << names;
  EXPECT_NE(std::string(names).find("fill"), std::string::npos) << names;
  for (const char* name : {"scale", "fill"}) {
    cl_kernel a = d->clCreateKernel(p, name, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    cl_kernel b = d->clCreateKernel(q, name, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(this->Describe(a), this->Describe(b)) << name;
    d->clReleaseKernel(a);
    d->clReleaseKernel(b);
  }
  cl_kernel k = d->clCreateKernel(q, "scale", &err);
  EXPECT_EQ(this->Describe(k), "3 float* float int");
  // The signature's checks hold for the rebuilt kernel: a double where a float goes is refused.
  const double wrong = 2;
  EXPECT_EQ(d->clSetKernelArg(k, 1, sizeof wrong, &wrong), CL_INVALID_ARG_SIZE);
  EXPECT_EQ(d->clSetKernelArg(k, 3, sizeof(int), &err), CL_INVALID_ARG_INDEX);
  // And it runs.
  cl_mem m = this->Buf(4 * sizeof(float));
  const float s = 2;
  const int n = 4;
  EXPECT_EQ(d->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  EXPECT_EQ(d->clSetKernelArg(k, 1, sizeof s, &s), CL_SUCCESS);
  EXPECT_EQ(d->clSetKernelArg(k, 2, sizeof n, &n), CL_SUCCESS);
  const size_t global = 4;
  EXPECT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  // A binary of the rebuilt program is a binary too.
  cl_program r = this->FromBinary(this->Binary(q), &status, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  d->clReleaseProgram(r);
  d->clReleaseMemObject(m);
  d->clReleaseKernel(k);
  d->clReleaseProgram(q);
  d->clReleaseProgram(p);
  this->Teardown();
}

TYPED_TEST(ProgramBinary, CorruptOrForeignBinariesAreInvalidPerDevice) {
  this->Setup("gpu-64m;gpu-64m");
  auto* d = this->d_;
  cl_program p = this->Built(kSource);
  const std::vector<unsigned char> good = this->Binary(p);
  d->clReleaseProgram(p);
  const std::string text = kSource;
  std::vector<std::vector<unsigned char>> bad = {
      std::vector<unsigned char>(text.begin(), text.end()),         // source text, not a binary
      std::vector<unsigned char>(good.begin(), good.end() - 1),     // truncated
      std::vector<unsigned char>(good.begin(), good.begin() + 12),  // a header only
      std::vector<unsigned char>(64, 0),                            // zeros
  };
  std::vector<unsigned char> flipped = good;
  flipped[good.size() / 2] ^= 1;
  bad.push_back(flipped);
  // This context has both devices: a valid binary for one and a bad one for the other.
  cl_int err;
  cl_context ctx2 = d->clCreateContext(nullptr, 2, this->devices_.data(), nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  for (const auto& b : bad) {
    const unsigned char* bins[2] = {good.data(), b.data()};
    const size_t sizes[2] = {good.size(), b.size()};
    cl_int status[2] = {1, 1};
    err = 1;
    cl_program q =
        d->clCreateProgramWithBinary(ctx2, 2, this->devices_.data(), sizes, bins, status, &err);
    EXPECT_EQ(q, nullptr);
    EXPECT_EQ(err, CL_INVALID_BINARY);
    EXPECT_EQ(status[0], CL_SUCCESS);
    EXPECT_EQ(status[1], CL_INVALID_BINARY);
  }
  d->clReleaseContext(ctx2);
  EXPECT_EQ(this->ctl_->snapshot().live["program"], 0u);
  this->Teardown();
}

// The container's checksum is valid but the driver's binary inside it is cut short or forged:
// POCL trusted its sizes (an assertion at pocl_binary.c:705 aborted the process, once a
// SIGSEGV). Every cut is CL_INVALID_BINARY in both modes; a binary of another POCL format version
// is rebuilt from the source in backing mode.
TYPED_TEST(ProgramBinary, ADriverBinaryCutShortIsInvalidNotACrash) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_program p = this->Built(kSource);
  const std::vector<unsigned char> good = this->Binary(p);
  d->clReleaseProgram(p);
  mockcl::program_binary decoded;
  std::string why;
  ASSERT_TRUE(mockcl::decode_program_binary(good.data(), good.size(), decoded, why)) << why;
  // Without backing the container has no driver binary: a forged one stands in for it.
  std::string pocl = decoded.backing;
  if (pocl.empty()) {
    pocl.assign("poclbin\0", 8);
    pocl += std::string(8, '\1') + std::string("\x09\0\0\0\1\0\0\0", 8) + std::string(8, '\0') +
            std::string("\1\0\0\0", 4) + std::string(40, 'A') + std::string(1, '\0') +
            std::string(64, '\xff');
  }
  const auto with_backing = [&](const std::string& backing) {
    mockcl::program_binary b = decoded;
    b.backing = backing;
    const std::string bytes = mockcl::encode_program_binary(b);
    return std::vector<unsigned char>(bytes.begin(), bytes.end());
  };
  for (size_t cut :
       {size_t{8}, size_t{77}, size_t{85}, pocl.size() / 3, pocl.size() / 2, pocl.size() - 1}) {
    if (cut >= pocl.size()) continue;
    cl_int status = 1, err = 1;
    cl_program q = this->FromBinary(with_backing(pocl.substr(0, cut)), &status, &err);
    EXPECT_EQ(q, nullptr) << cut;
    EXPECT_EQ(err, CL_INVALID_BINARY) << cut;
    EXPECT_EQ(status, CL_INVALID_BINARY) << cut;
  }
  // Another format version is not handed to POCL either: rebuilt from the container's source.
  std::string stale = pocl;
  stale[16] = 8;
  cl_int status = 1, err = 1;
  cl_program q = this->FromBinary(with_backing(stale), &status, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clBuildProgram(q, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = d->clCreateKernel(q, "scale", &err);
  EXPECT_EQ(err, CL_SUCCESS);
  d->clReleaseKernel(k);
  d->clReleaseProgram(q);
  EXPECT_EQ(this->ctl_->snapshot().live["program"], 0u);
  this->Teardown();
}

// clCompileProgram then clLinkProgram: with no backing device the link joins the inputs' kernels
// and signatures (it answered CL_INVALID_OPERATION); over POCL, POCL links. Either way the
// kernels of both inputs take their arguments, and a kernel defined twice fails the link.
TYPED_TEST(ProgramBinary, CompileThenLinkJoinsTheInputsKernels) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  const char* a =
      "float twice(float x);\n__kernel void scale(__global float* a, const float s) {\n"
      "  a[get_global_id(0)] = twice(a[get_global_id(0)]) * s; }\n";
  const char* b =
      "float twice(float x) { return 2 * x; }\n"
      "__kernel void fill(__global int* a, int v, int n) { a[get_global_id(0)] = v + n; }\n";
  cl_int err;
  cl_program pa = d->clCreateProgramWithSource(this->ctx_, 1, &a, nullptr, &err);
  cl_program pb = d->clCreateProgramWithSource(this->ctx_, 1, &b, nullptr, &err);
  ASSERT_EQ(d->clCompileProgram(pa, 0, nullptr, "", 0, nullptr, nullptr, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clCompileProgram(pb, 0, nullptr, "", 0, nullptr, nullptr, nullptr, nullptr),
            CL_SUCCESS);
  cl_program_binary_type type = 0;
  ASSERT_EQ(d->clGetProgramBuildInfo(pa, this->devices_[0], CL_PROGRAM_BINARY_TYPE, sizeof type,
                                     &type, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(type, static_cast<cl_program_binary_type>(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT));
  const cl_program inputs[2] = {pa, pb};
  cl_program linked =
      d->clLinkProgram(this->ctx_, 0, nullptr, "", 2, inputs, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  for (const auto& [name, args] : {std::pair<const char*, cl_uint>{"scale", 2}, {"fill", 3}}) {
    cl_kernel k = d->clCreateKernel(linked, name, &err);
    ASSERT_EQ(err, CL_SUCCESS) << name;
    cl_uint n = 0;
    EXPECT_EQ(d->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr), CL_SUCCESS);
    EXPECT_EQ(n, args) << name;
    d->clReleaseKernel(k);
  }
  // Not compiled: no input for a link.
  cl_program raw = d->clCreateProgramWithSource(this->ctx_, 1, &a, nullptr, &err);
  const cl_program duplicate[2] = {pa, pa};
  cl_program twice =
      d->clLinkProgram(this->ctx_, 0, nullptr, "", 2, duplicate, nullptr, nullptr, &err);
  EXPECT_NE(err, CL_SUCCESS);
  if (twice != nullptr) d->clReleaseProgram(twice);
  d->clReleaseProgram(raw);
  d->clReleaseProgram(linked);
  d->clReleaseProgram(pa);
  d->clReleaseProgram(pb);
  EXPECT_EQ(this->ctl_->snapshot().live["program"], 0u);
  this->Teardown();
}

}  // namespace
