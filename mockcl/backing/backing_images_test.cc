// Images and samplers on the backing device (MOCKCL_BACKING=pocl), in-process and through the
// loader: creation and info, every image command checked against the bytes it should move,
// samplers and image kernel arguments, the device model's charge and credit, out-of-memory on a
// full device, injected faults, and images and samplers in the exit leak count. The last test
// checks that without a backing device there are still no images.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mockcl/battery_fixture.h"

namespace mockcl_battery {
namespace {

template <typename T>
class Images : public Battery<T> {
 protected:
  void SetUp() override {
    Battery<T>::SetUp();
    ASSERT_EQ(this->ctl_->configure_backing("pocl"), "");
  }
  void TearDown() override {
    this->ctl_->configure_backing("pocl");
    Battery<T>::TearDown();
  }
  // A w x h RGBA / UNSIGNED_INT8 image (4 bytes a texel); h == 0: 1D.
  cl_mem Image(size_t w, size_t h, cl_int* err_out = nullptr,
               cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr) {
    cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc{};
    desc.image_type = h ? CL_MEM_OBJECT_IMAGE2D : CL_MEM_OBJECT_IMAGE1D;
    desc.image_width = w;
    desc.image_height = h;
    cl_int err;
    cl_mem m = this->d_->clCreateImage(this->ctx_, flags, &f, &desc, host, &err);
    if (err_out)
      *err_out = err;
    else
      EXPECT_EQ(err, CL_SUCCESS);
    return m;
  }
  std::vector<uint8_t> Read(cl_mem img, size_t w, size_t h) {
    std::vector<uint8_t> out(w * h * 4, 0xEE);
    const size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
    EXPECT_EQ(this->d_->clEnqueueReadImage(this->q_, img, CL_TRUE, origin, region, 0, 0, out.data(),
                                           0, nullptr, nullptr),
              CL_SUCCESS);
    return out;
  }
};
TYPED_TEST_SUITE(Images, Backends, BackendNames);

std::vector<uint8_t> Ramp(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 7 + 1);
  return v;
}

TYPED_TEST(Images, DeviceReportsPoclsImageSupportAndFormats) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_bool support = CL_FALSE;
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_IMAGE_SUPPORT, sizeof support, &support,
                               nullptr),
            CL_SUCCESS);
  EXPECT_EQ(support, CL_TRUE);
  size_t w2 = 0;
  ASSERT_EQ(
      d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof w2, &w2, nullptr),
      CL_SUCCESS);
  EXPECT_GE(w2, 2048u);  // OpenCL's minimum for a device with images.
  cl_uint samplers = 0;
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_MAX_SAMPLERS, sizeof samplers,
                               &samplers, nullptr),
            CL_SUCCESS);
  EXPECT_GE(samplers, 8u);
  cl_uint n = 0;
  ASSERT_EQ(d->clGetSupportedImageFormats(this->ctx_, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0,
                                          nullptr, &n),
            CL_SUCCESS);
  ASSERT_GT(n, 0u);
  std::vector<cl_image_format> fs(n);
  ASSERT_EQ(d->clGetSupportedImageFormats(this->ctx_, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, n,
                                          fs.data(), nullptr),
            CL_SUCCESS);
  bool rgba8 = false;
  for (const auto& f : fs)
    rgba8 |= f.image_channel_order == CL_RGBA && f.image_channel_data_type == CL_UNORM_INT8;
  EXPECT_TRUE(rgba8);  // Required of every device with images.
  // OpenCL 3.0: a count with no list asks only the number (the CTS's is_image_format_supported
  // passes 128); a list with a count of 0 is CL_INVALID_VALUE.
  cl_uint again = 0;
  EXPECT_EQ(d->clGetSupportedImageFormats(this->ctx_, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 128,
                                          nullptr, &again),
            CL_SUCCESS);
  EXPECT_EQ(again, n);
  EXPECT_EQ(d->clGetSupportedImageFormats(this->ctx_, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0,
                                          fs.data(), &n),
            CL_INVALID_VALUE);
  // A device listing 3D image formats for writing lists cl_khr_3d_image_writes (POCL does both).
  ASSERT_EQ(d->clGetSupportedImageFormats(this->ctx_, CL_MEM_WRITE_ONLY, CL_MEM_OBJECT_IMAGE3D, 0,
                                          nullptr, &n),
            CL_SUCCESS);
  size_t len = 0;
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_EXTENSIONS, 0, nullptr, &len),
            CL_SUCCESS);
  std::string exts(len, '\0');
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_EXTENSIONS, len, exts.data(), nullptr),
            CL_SUCCESS);
  EXPECT_EQ(n > 0, exts.find("cl_khr_3d_image_writes") != std::string::npos) << exts;
  EXPECT_GT(n, 0u);  // POCL 3.1 writes 3D images.
  this->Teardown();
}

// CL_MEM_PROPERTIES of an image: the list clCreateImageWithProperties was given ({0}: one
// entry), else nothing (the CTS's image_properties_queries).
TYPED_TEST(Images, PropertiesQueryReturnsTheListGiven) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 4;
  desc.image_height = 4;
  const cl_mem_properties empty[1] = {0};
  for (const cl_mem_properties* props : {empty, static_cast<const cl_mem_properties*>(nullptr)}) {
    cl_int err;
    cl_mem img = d->clCreateImageWithProperties(this->ctx_, props, CL_MEM_READ_WRITE, &f, &desc,
                                                nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    size_t size = 99;
    ASSERT_EQ(d->clGetMemObjectInfo(img, CL_MEM_PROPERTIES, 0, nullptr, &size), CL_SUCCESS);
    EXPECT_EQ(size, props ? sizeof(cl_mem_properties) : 0u);
    cl_mem_properties got = 5;
    if (props) {
      ASSERT_EQ(d->clGetMemObjectInfo(img, CL_MEM_PROPERTIES, sizeof got, &got, nullptr),
                CL_SUCCESS);
      EXPECT_EQ(got, 0u);
    }
    EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  }
  this->Teardown();
}

TYPED_TEST(Images, CreateInfoAndBadInput) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem img = this->Image(16, 8);
  ASSERT_NE(img, nullptr);
  size_t v = 0;
  ASSERT_EQ(d->clGetImageInfo(img, CL_IMAGE_WIDTH, sizeof v, &v, nullptr), CL_SUCCESS);
  EXPECT_EQ(v, 16u);
  ASSERT_EQ(d->clGetImageInfo(img, CL_IMAGE_HEIGHT, sizeof v, &v, nullptr), CL_SUCCESS);
  EXPECT_EQ(v, 8u);
  ASSERT_EQ(d->clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE, sizeof v, &v, nullptr), CL_SUCCESS);
  EXPECT_EQ(v, 4u);
  cl_mem_object_type t = 0;
  ASSERT_EQ(d->clGetMemObjectInfo(img, CL_MEM_TYPE, sizeof t, &t, nullptr), CL_SUCCESS);
  EXPECT_EQ(t, cl_mem_object_type(CL_MEM_OBJECT_IMAGE2D));
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetMemObjectInfo(img, CL_MEM_CONTEXT, sizeof c, &c, nullptr), CL_SUCCESS);
  EXPECT_EQ(c, this->ctx_);
  size_t size = 0;
  ASSERT_EQ(d->clGetMemObjectInfo(img, CL_MEM_SIZE, sizeof size, &size, nullptr), CL_SUCCESS);
  EXPECT_EQ(size, 16u * 8 * 4);
  cl_int err = 0;
  // An image is no buffer, and a buffer no image.
  uint8_t byte = 0;
  EXPECT_EQ(d->clEnqueueReadBuffer(this->q_, img, CL_TRUE, 0, 1, &byte, 0, nullptr, nullptr),
            CL_INVALID_MEM_OBJECT);
  cl_mem buf = this->Buf(64);
  const size_t o[3] = {0, 0, 0}, r[3] = {1, 1, 1};
  EXPECT_EQ(d->clEnqueueReadImage(this->q_, buf, CL_TRUE, o, r, 0, 0, &byte, 0, nullptr, nullptr),
            CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(d->clGetImageInfo(buf, CL_IMAGE_WIDTH, sizeof v, &v, nullptr), CL_INVALID_MEM_OBJECT);
  cl_buffer_region region{0, 16};
  EXPECT_EQ(d->clCreateSubBuffer(img, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_MEM_OBJECT);
  // A region outside the image, an empty one, no host pointer.
  std::vector<uint8_t> host(16 * 8 * 4);
  const size_t big[3] = {17, 1, 1}, empty[3] = {0, 1, 1}, one[3] = {1, 1, 1}, far[3] = {0, 8, 0};
  EXPECT_EQ(
      d->clEnqueueReadImage(this->q_, img, CL_TRUE, o, big, 0, 0, host.data(), 0, nullptr, nullptr),
      CL_INVALID_VALUE);
  EXPECT_EQ(d->clEnqueueReadImage(this->q_, img, CL_TRUE, o, empty, 0, 0, host.data(), 0, nullptr,
                                  nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clEnqueueReadImage(this->q_, img, CL_TRUE, far, one, 0, 0, host.data(), 0, nullptr,
                                  nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(
      d->clEnqueueReadImage(this->q_, img, CL_TRUE, o, one, 0, 0, nullptr, 0, nullptr, nullptr),
      CL_INVALID_VALUE);
  EXPECT_EQ(
      d->clEnqueueReadImage(this->q_, img, CL_TRUE, o, one, 2, 0, host.data(), 0, nullptr, nullptr),
      CL_INVALID_VALUE);  // Row pitch below the row.
  // Bad descriptors and formats: POCL's verdict, and nothing is charged or created.
  const uint64_t before = this->Outstanding();
  cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 0;
  desc.image_height = 4;
  EXPECT_EQ(d->clCreateImage(this->ctx_, 0, &f, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_DESCRIPTOR);
  desc.image_width = 1 << 30;  // Beyond POCL's CL_DEVICE_IMAGE2D_MAX_WIDTH.
  EXPECT_EQ(d->clCreateImage(this->ctx_, 0, &f, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_SIZE);
  desc.image_type = 0x7777;
  desc.image_width = 4;
  EXPECT_EQ(d->clCreateImage(this->ctx_, 0, &f, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_DESCRIPTOR);
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  cl_image_format nonsense{0x7777, CL_FLOAT};
  EXPECT_EQ(d->clCreateImage(this->ctx_, 0, &nonsense, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  // A valid format the device does not list (POCL itself answers CL_INVALID_OPERATION).
  cl_uint n = 0;
  ASSERT_EQ(d->clGetSupportedImageFormats(this->ctx_, 0, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n),
            CL_SUCCESS);
  std::vector<cl_image_format> listed(n);
  ASSERT_EQ(d->clGetSupportedImageFormats(this->ctx_, 0, CL_MEM_OBJECT_IMAGE2D, n, listed.data(),
                                          nullptr),
            CL_SUCCESS);
  cl_image_format unlisted{0, 0};
  for (cl_channel_order o = CL_R; o <= CL_ABGR && !unlisted.image_channel_order; ++o)
    for (cl_channel_type t = CL_SNORM_INT8; t <= CL_FLOAT && !unlisted.image_channel_order; ++t) {
      bool found = false;
      for (const auto& g : listed)
        found |= g.image_channel_order == o && g.image_channel_data_type == t;
      if (!found) unlisted = {o, t};
    }
  ASSERT_NE(unlisted.image_channel_order, 0u);
  EXPECT_EQ(d->clCreateImage(this->ctx_, 0, &unlisted, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_IMAGE_FORMAT_NOT_SUPPORTED);
  EXPECT_EQ(d->clCreateImage(this->ctx_, 0, nullptr, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  EXPECT_EQ(d->clCreateImage(this->ctx_, 0, &f, nullptr, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_DESCRIPTOR);
  EXPECT_EQ(d->clCreateImage2D(nullptr, 0, &f, 4, 4, 0, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_CONTEXT);
  EXPECT_EQ(this->Outstanding(), before);
  EXPECT_EQ(this->ctl_->snapshot().live.at("mem"), 2u);
  EXPECT_EQ(d->clReleaseMemObject(buf), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  this->Teardown();
}

TYPED_TEST(Images, WriteReadCopyFillRoundTrip) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  constexpr size_t w = 8, h = 4;
  const std::vector<uint8_t> ramp = Ramp(w * h * 4);
  cl_mem a = this->Image(w, h), b = this->Image(w, h);
  EXPECT_EQ(this->Read(a, w, h), std::vector<uint8_t>(w * h * 4, 0))
      << "a new image reads as zeros";
  const size_t o[3] = {0, 0, 0}, all[3] = {w, h, 1};
  ASSERT_EQ(
      d->clEnqueueWriteImage(this->q_, a, CL_FALSE, o, all, 0, 0, ramp.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(this->Read(a, w, h), ramp);
  // Copy a's right half into b's left half.
  const size_t src[3] = {w / 2, 0, 0}, half[3] = {w / 2, h, 1};
  ASSERT_EQ(d->clEnqueueCopyImage(this->q_, a, b, src, o, half, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<uint8_t> got = this->Read(b, w, h);
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x)
      for (size_t c = 0; c < 4; ++c)
        ASSERT_EQ(got[(y * w + x) * 4 + c], x < w / 2 ? ramp[(y * w + x + w / 2) * 4 + c] : 0)
            << x << "," << y;
  EXPECT_EQ(d->clEnqueueCopyImage(this->q_, a, a, o, o, half, 0, nullptr, nullptr),
            CL_MEM_COPY_OVERLAP);
  // Fill one texel of b.
  const cl_uint color[4] = {9, 8, 7, 6};
  const size_t at[3] = {w - 1, h - 1, 0}, one[3] = {1, 1, 1};
  ASSERT_EQ(d->clEnqueueFillImage(this->q_, b, color, at, one, 0, nullptr, nullptr), CL_SUCCESS);
  got = this->Read(b, w, h);
  const size_t last = (w * h - 1) * 4;
  EXPECT_EQ(got[last], 9);
  EXPECT_EQ(got[last + 3], 6);
  // A format mismatch.
  cl_image_format f{CL_R, CL_FLOAT};
  cl_int err;
  cl_mem r = d->clCreateImage2D(this->ctx_, CL_MEM_READ_WRITE, &f, w, h, 0, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clEnqueueCopyImage(this->q_, a, r, o, o, all, 0, nullptr, nullptr),
            CL_IMAGE_FORMAT_MISMATCH);
  // COPY_HOST_PTR at creation.
  std::vector<uint8_t> init = Ramp(w * h * 4);
  cl_mem c = this->Image(w, h, nullptr, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, init.data());
  EXPECT_EQ(this->Read(c, w, h), ramp);
  for (cl_mem m : {a, b, r, c}) EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  this->Teardown();
}

TYPED_TEST(Images, BufferImageCopiesAndMap) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  constexpr size_t w = 8, h = 4, n = w * h * 4;
  const std::vector<uint8_t> ramp = Ramp(n);
  cl_mem buf = this->Buf(n + 64);
  ASSERT_EQ(
      d->clEnqueueWriteBuffer(this->q_, buf, CL_TRUE, 64, n, ramp.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  cl_mem img = this->Image(w, h);
  const size_t o[3] = {0, 0, 0}, all[3] = {w, h, 1};
  ASSERT_EQ(d->clEnqueueCopyBufferToImage(this->q_, buf, img, 64, o, all, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Read(img, w, h), ramp);
  EXPECT_EQ(d->clEnqueueCopyBufferToImage(this->q_, buf, img, 65, o, all, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  cl_mem out = this->Buf(n);
  ASSERT_EQ(d->clEnqueueCopyImageToBuffer(this->q_, img, out, o, all, 0, 0, nullptr, nullptr),
            CL_SUCCESS);
  std::vector<uint8_t> got(n);
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, out, CL_TRUE, 0, n, got.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(got, ramp);
  // Map a 2x2 region at (1, 1), change it, unmap: the image has the change.
  size_t row = 0, slice = 7;
  cl_int err;
  const size_t at[3] = {1, 1, 0}, two[3] = {2, 2, 1};
  auto* p =
      static_cast<uint8_t*>(d->clEnqueueMapImage(this->q_, img, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                                 at, two, &row, &slice, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(row, 8u);
  EXPECT_EQ(slice, 0u);
  EXPECT_EQ(p[0], ramp[(1 * w + 1) * 4]);
  EXPECT_EQ(p[row], ramp[(2 * w + 1) * 4]);
  cl_uint count = 0;
  ASSERT_EQ(d->clGetMemObjectInfo(img, CL_MEM_MAP_COUNT, sizeof count, &count, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(count, 1u);
  p[0] = 0xAB;
  ASSERT_EQ(d->clEnqueueUnmapMemObject(this->q_, img, p, 0, nullptr, nullptr), CL_SUCCESS);
  got = this->Read(img, w, h);
  EXPECT_EQ(got[(1 * w + 1) * 4], 0xAB);
  EXPECT_EQ(got[0], ramp[0]);
  EXPECT_EQ(d->clEnqueueMapImage(this->q_, img, CL_TRUE, CL_MAP_READ, at, two, nullptr, nullptr, 0,
                                 nullptr, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);  // No row pitch to return.
  for (cl_mem m : {buf, img, out}) EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  this->Teardown();
}

TYPED_TEST(Images, SamplersAndImageKernelArguments) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err;
  cl_sampler s =
      d->clCreateSampler(this->ctx_, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_uint refs = 0;
  ASSERT_EQ(d->clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(refs, 1u);
  cl_addressing_mode am = 0;
  ASSERT_EQ(d->clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(am, cl_addressing_mode(CL_ADDRESS_CLAMP_TO_EDGE));
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, nullptr), CL_SUCCESS);
  EXPECT_EQ(c, this->ctx_);
  const cl_sampler_properties bad[] = {CL_SAMPLER_FILTER_MODE, 0x7777, 0};
  EXPECT_EQ(d->clCreateSamplerWithProperties(this->ctx_, bad, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  const cl_sampler_properties twice[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR,
                                         CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0};
  EXPECT_EQ(d->clCreateSamplerWithProperties(this->ctx_, twice, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  const cl_sampler_properties unknown[] = {0x7777, 1, 0};
  EXPECT_EQ(d->clCreateSamplerWithProperties(this->ctx_, unknown, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  const char* src =
      "__kernel void k(read_only image2d_t in, sampler_t s, write_only image2d_t out) {\n"
      "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
      "  uint4 v = read_imageui(in, s, p);\n"
      "  write_imageui(out, p, v + (uint4)(1, 1, 1, 1));\n"
      "}\n"
      "#ifndef __IMAGE_SUPPORT__\n#error the image macros must be defined\n#endif\n";
  cl_program prog = d->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clBuildProgram(prog, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = d->clCreateKernel(prog, "k", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  constexpr size_t w = 8, h = 4;
  const std::vector<uint8_t> ramp = Ramp(w * h * 4);
  cl_mem in = this->Image(w, h, nullptr, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          const_cast<uint8_t*>(ramp.data()));
  cl_mem out = this->Image(w, h, nullptr, CL_MEM_WRITE_ONLY);
  cl_mem buf = this->Buf(16);
  EXPECT_EQ(d->clSetKernelArg(k, 0, sizeof buf, &buf),
            CL_INVALID_MEM_OBJECT);  // A buffer is no image.
  EXPECT_EQ(d->clSetKernelArg(k, 1, sizeof buf, &buf), CL_INVALID_SAMPLER);
  cl_kernel touch = nullptr;
  {
    const char* bsrc = "__kernel void touch(__global uint* p) { p[0] = 1; }";
    cl_program bp = d->clCreateProgramWithSource(this->ctx_, 1, &bsrc, nullptr, &err);
    ASSERT_EQ(d->clBuildProgram(bp, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
    touch = d->clCreateKernel(bp, "touch", &err);
    ASSERT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(d->clSetKernelArg(touch, 0, sizeof in, &in),
              CL_INVALID_MEM_OBJECT);  // An image is no buffer.
    d->clReleaseKernel(touch);
    d->clReleaseProgram(bp);
  }
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof in, &in), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof s, &s), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 2, sizeof out, &out), CL_SUCCESS);
  const size_t global[2] = {w, h};
  ASSERT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr),
      CL_SUCCESS);
  const std::vector<uint8_t> got = this->Read(out, w, h);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], uint8_t(ramp[i] + 1)) << i;
  // The sampler holds the context: the leak count sees it until it goes.
  EXPECT_EQ(this->ctl_->snapshot().live.at("sampler"), 1u);
  EXPECT_EQ(d->clReleaseSampler(s), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live.at("sampler"), 0u);
  EXPECT_EQ(d->clReleaseSampler(s), CL_INVALID_SAMPLER);  // A double release is reported.
  EXPECT_EQ(this->ctl_->snapshot().reports.double_release, 1u);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  for (cl_mem m : {in, out, buf}) EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  this->Teardown();
}

// A lazy queue runs the launch after the application has released its sampler and images: the
// launch holds them, and the sampler goes only once the launch has run.
TYPED_TEST(Images, LaunchHoldsItsSamplerAndImages) {
  ASSERT_EQ(this->ctl_->configure_schedule("lazy"), "");
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err;
  const char* src =
      "__kernel void k(read_only image2d_t in, sampler_t s, __global uint* out) {\n"
      "  out[get_global_id(0)] = read_imageui(in, s, (int2)(get_global_id(0), 0)).x;\n"
      "}\n";
  cl_program prog = d->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clBuildProgram(prog, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = d->clCreateKernel(prog, "k", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::vector<uint8_t> texels = Ramp(4 * 4);
  cl_mem in = this->Image(4, 1, nullptr, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, texels.data());
  cl_sampler s = d->clCreateSampler(this->ctx_, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem out = this->Buf(4 * sizeof(cl_uint));
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof in, &in), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof s, &s), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 2, sizeof out, &out), CL_SUCCESS);
  const size_t global = 4;
  ASSERT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(d->clReleaseSampler(s), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(in), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live.at("sampler"), 1u) << "the queued launch holds it";
  cl_uint got[4] = {};
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, out, CL_TRUE, 0, sizeof got, got, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], texels[i * 4]) << i;
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live.at("sampler"), 0u);
  // A sampler released before the launch is enqueued: the launch is refused.
  cl_sampler s2 =
      d->clCreateSampler(this->ctx_, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err);
  cl_mem in2 = this->Image(4, 1);
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof in2, &in2), CL_SUCCESS);
  ASSERT_EQ(d->clSetKernelArg(k, 1, sizeof s2, &s2), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseSampler(s2), CL_SUCCESS);
  EXPECT_EQ(
      d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_INVALID_KERNEL_ARGS);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  EXPECT_EQ(d->clReleaseMemObject(in2), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(out), CL_SUCCESS);
  this->Teardown();
}

// An image on a buffer (IMAGE1D_BUFFER) shares the buffer's bytes and its charge, and holds it.
TYPED_TEST(Images, ImageOnABufferSharesItsBytesAndCharge) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  constexpr size_t n = 64;
  const std::vector<uint8_t> ramp = Ramp(n * 4);
  cl_mem buf = this->Buf(n * 4);
  ASSERT_EQ(
      d->clEnqueueWriteBuffer(this->q_, buf, CL_TRUE, 0, n * 4, ramp.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  const uint64_t charged = this->Outstanding();
  cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
  desc.image_width = n;
  desc.mem_object = buf;
  cl_int err;
  cl_mem img = d->clCreateImage(this->ctx_, CL_MEM_READ_WRITE, &f, &desc, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), charged);
  cl_mem assoc = nullptr, ib = nullptr;
  ASSERT_EQ(d->clGetMemObjectInfo(img, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(assoc, buf);
  ASSERT_EQ(d->clGetImageInfo(img, CL_IMAGE_BUFFER, sizeof ib, &ib, nullptr), CL_SUCCESS);
  EXPECT_EQ(ib, buf);
  EXPECT_EQ(d->clReleaseMemObject(buf), CL_SUCCESS);  // The image keeps it.
  std::vector<uint8_t> got(n * 4);
  const size_t o[3] = {0, 0, 0}, r[3] = {n, 1, 1};
  ASSERT_EQ(
      d->clEnqueueReadImage(this->q_, img, CL_TRUE, o, r, 0, 0, got.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(got, ramp);
  EXPECT_EQ(this->ctl_->snapshot().live.at("mem"), 2u);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live.at("mem"), 0u);
  EXPECT_LT(this->Outstanding(), charged);
  // Another context's buffer, or an image, is no image's buffer.
  desc.mem_object = this->Image(4, 4);
  EXPECT_EQ(d->clCreateImage(this->ctx_, CL_MEM_READ_WRITE, &f, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_IMAGE_DESCRIPTOR);
  EXPECT_EQ(d->clReleaseMemObject(desc.mem_object), CL_SUCCESS);
  this->Teardown();
}

// OpenCL 3.0, clCreateImage with a buffer: the image takes the access and host-access bits it
// does not give from the buffer, may narrow but not widen or switch them, inherits the buffer's
// host-pointer bits and may not give any; host reads and writes obey the inherited bits.
TYPED_TEST(Images, ImageOnABufferInheritsItsFlags) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  constexpr size_t n = 16;
  cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
  desc.image_width = n;
  std::vector<uint8_t> host(n * 4, 3);
  const size_t o[3] = {0, 0, 0}, r[3] = {n, 1, 1};
  auto flags_of = [&](cl_mem m) {
    cl_mem_flags fl = 0;
    EXPECT_EQ(d->clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof fl, &fl, nullptr), CL_SUCCESS);
    return fl;
  };
  cl_int err;

  // Host-read-only buffer: the image, giving no host bits, is host-read-only too.
  cl_mem ro = this->Buf(n * 4, nullptr, CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY);
  desc.mem_object = ro;
  cl_mem img = d->clCreateImage(this->ctx_, 0, &f, &desc, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(flags_of(img), cl_mem_flags(CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY));
  EXPECT_EQ(
      d->clEnqueueReadImage(this->q_, img, CL_TRUE, o, r, 0, 0, host.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(
      d->clEnqueueWriteImage(this->q_, img, CL_TRUE, o, r, 0, 0, host.data(), 0, nullptr, nullptr),
      CL_INVALID_OPERATION);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  // Narrowing to no host access is allowed; then reads are refused as well.
  img = d->clCreateImage(this->ctx_, CL_MEM_HOST_NO_ACCESS, &f, &desc, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(
      d->clEnqueueReadImage(this->q_, img, CL_TRUE, o, r, 0, 0, host.data(), 0, nullptr, nullptr),
      CL_INVALID_OPERATION);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  // Switching host access, or widening device access, is CL_INVALID_VALUE.
  EXPECT_EQ(d->clCreateImage(this->ctx_, CL_MEM_HOST_WRITE_ONLY, &f, &desc, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(d->clCreateImage(this->ctx_, CL_MEM_READ_WRITE, &f, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(d->clCreateImage(this->ctx_, CL_MEM_WRITE_ONLY, &f, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(d->clReleaseMemObject(ro), CL_SUCCESS);

  // A buffer made with a host pointer: the image inherits the bit and may not give one.
  cl_mem copied = this->Buf(n * 4, nullptr, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
  desc.mem_object = copied;
  EXPECT_EQ(d->clCreateImage(this->ctx_, CL_MEM_COPY_HOST_PTR, &f, &desc, host.data(), &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(d->clCreateImage(this->ctx_, CL_MEM_ALLOC_HOST_PTR, &f, &desc, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  img = d->clCreateImage(this->ctx_, CL_MEM_WRITE_ONLY, &f, &desc, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(flags_of(img), cl_mem_flags(CL_MEM_WRITE_ONLY | CL_MEM_COPY_HOST_PTR));
  EXPECT_EQ(
      d->clEnqueueWriteImage(this->q_, img, CL_TRUE, o, r, 0, 0, host.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(copied), CL_SUCCESS);
  this->Teardown();
}

// In backing mode a map is a copy, except for objects made with CL_MEM_USE_HOST_PTR: OpenCL
// requires a pointer derived from host_ptr, holding the device's bytes (here POCL's) once the map
// completes, and written back at the unmap. An image's map there has the host memory's pitches.
// Host access is mockcl's to enforce: a host-write-only image is still filled for a write map.
TYPED_TEST(Images, UseHostPtrMapsReturnTheHostMemory) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err;
  // A buffer: a kernel-free way to change POCL's bytes is a fill.
  alignas(128) static uint8_t host[512];
  std::memset(host, 1, sizeof host);
  cl_mem buf = this->Buf(sizeof host, nullptr, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host);
  const uint8_t nine = 9;
  ASSERT_EQ(d->clEnqueueFillBuffer(this->q_, buf, &nine, 1, 0, sizeof host, 0, nullptr, nullptr),
            CL_SUCCESS);
  auto* p = static_cast<uint8_t*>(d->clEnqueueMapBuffer(this->q_, buf, CL_TRUE, CL_MAP_WRITE, 128,
                                                        64, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(p, host + 128);
  EXPECT_EQ(p[0], 9);
  p[1] = 42;
  ASSERT_EQ(d->clEnqueueUnmapMemObject(this->q_, buf, p, 0, nullptr, nullptr), CL_SUCCESS);
  uint8_t got[2] = {};
  ASSERT_EQ(d->clEnqueueReadBuffer(this->q_, buf, CL_TRUE, 128, 2, got, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(got[0], 9);
  EXPECT_EQ(got[1], 42);
  EXPECT_EQ(d->clReleaseMemObject(buf), CL_SUCCESS);

  // A 2D image with a padded row pitch, host-write-only: the map starts at the origin's texel in
  // the host memory and reports its pitch.
  constexpr size_t w = 8, h = 4, pitch = 48;  // 32 bytes of texels a row, 16 of padding.
  alignas(128) static uint8_t pixels[pitch * h];
  std::memset(pixels, 0, sizeof pixels);
  cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = w;
  desc.image_height = h;
  desc.image_row_pitch = pitch;
  cl_mem img =
      d->clCreateImage(this->ctx_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR | CL_MEM_HOST_WRITE_ONLY,
                       &f, &desc, pixels, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const cl_uint color[4] = {7, 7, 7, 7};
  const size_t all[3] = {w, h, 1}, zero[3] = {0, 0, 0};
  ASSERT_EQ(d->clEnqueueFillImage(this->q_, img, color, zero, all, 0, nullptr, nullptr),
            CL_SUCCESS);
  const size_t origin[3] = {2, 1, 0}, region[3] = {3, 2, 1};
  size_t row_pitch = 0;
  auto* t = static_cast<uint8_t*>(d->clEnqueueMapImage(this->q_, img, CL_TRUE, CL_MAP_WRITE, origin,
                                                       region, &row_pitch, nullptr, 0, nullptr,
                                                       nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(t, pixels + 1 * pitch + 2 * 4);
  EXPECT_EQ(row_pitch, pitch);
  EXPECT_EQ(t[0], 7);           // Filled from POCL's image, though the host may not read it.
  EXPECT_EQ(t[pitch + 11], 7);  // The region's last byte, on its second row.
  t[pitch] = 99;                // Texel (2, 2), red.
  ASSERT_EQ(d->clEnqueueUnmapMemObject(this->q_, img, t, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  // Read it back through a plain image copy: (2, 2) is 99, its neighbours 7.
  cl_mem out = this->Image(w, h);
  ASSERT_EQ(d->clEnqueueCopyImage(this->q_, img, out, zero, zero, all, 0, nullptr, nullptr),
            CL_SUCCESS);
  const std::vector<uint8_t> back = this->Read(out, w, h);
  EXPECT_EQ(back[(2 * w + 2) * 4], 99);
  EXPECT_EQ(back[(2 * w + 3) * 4], 7);
  EXPECT_EQ(back[(1 * w + 2) * 4], 7);
  // Reading it on the host is still refused.
  EXPECT_EQ(d->clEnqueueMapImage(this->q_, img, CL_TRUE, CL_MAP_READ, origin, region, &row_pitch,
                                 nullptr, 0, nullptr, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  EXPECT_EQ(d->clReleaseMemObject(out), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  this->Teardown();
}

TYPED_TEST(Images, ChargedLikeBuffersAndCreditedAtRelease) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  const uint64_t base = this->Outstanding();
  cl_mem buf = this->Buf(1000 * 3 * 4);
  const uint64_t as_buffer = this->Outstanding() - base;
  EXPECT_EQ(d->clReleaseMemObject(buf), CL_SUCCESS);
  ASSERT_EQ(this->Outstanding(), base);
  cl_mem img = this->Image(1000, 3);
  EXPECT_EQ(this->Outstanding() - base, as_buffer)
      << "an image is charged as a buffer of its bytes";
  EXPECT_GE(as_buffer, 12000u);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), base);
  this->Teardown();
}

TYPED_TEST(Images, DeferredDeviceChargesAtFirstUse) {
  this->Setup("gpu-64m:semantics=deferred");
  auto* d = this->d_;
  const uint64_t base = this->Outstanding();
  cl_mem img = this->Image(64, 64);
  EXPECT_EQ(this->Outstanding(), base);
  const cl_uint color[4] = {1, 2, 3, 4};
  const size_t o[3] = {0, 0, 0}, r[3] = {64, 64, 1};
  ASSERT_EQ(d->clEnqueueFillImage(this->q_, img, color, o, r, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_GE(this->Outstanding() - base, 64u * 64 * 4);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), base);
  this->Teardown();
}

TYPED_TEST(Images, OutOfMemoryWhenTheDeviceIsFull) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem big = this->Buf(60 * kMiB);
  const uint64_t full = this->Outstanding();
  cl_int err = 0;
  // 2048 x 1024 x 4 bytes = 8 MiB: more than is left.
  EXPECT_EQ(this->Image(2048, 1024, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(this->Outstanding(), full);
  EXPECT_EQ(this->ctl_->snapshot().live.at("mem"), 1u);
  EXPECT_EQ(d->clReleaseMemObject(big), CL_SUCCESS);
  cl_mem img = this->Image(2048, 1024, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  this->Teardown();
}

TYPED_TEST(Images, InjectedFaults) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  ASSERT_EQ(this->ctl_->configure_faults("nth:clCreateImage:1:CL_OUT_OF_RESOURCES"), "");
  cl_int err = 0;
  EXPECT_EQ(this->Image(4, 4, &err), nullptr);
  EXPECT_EQ(err, CL_OUT_OF_RESOURCES);
  cl_mem img = this->Image(4, 4);
  ASSERT_EQ(this->ctl_->configure_faults("exec:clEnqueueReadImage:1:CL_OUT_OF_RESOURCES"), "");
  std::vector<uint8_t> host(64);
  const size_t o[3] = {0, 0, 0}, r[3] = {4, 4, 1};
  cl_event ev = nullptr;
  ASSERT_EQ(
      d->clEnqueueReadImage(this->q_, img, CL_FALSE, o, r, 0, 0, host.data(), 0, nullptr, &ev),
      CL_SUCCESS);
  EXPECT_EQ(d->clWaitForEvents(1, &ev), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(this->Status(ev), CL_OUT_OF_RESOURCES);
  d->clReleaseEvent(ev);
  ASSERT_EQ(this->ctl_->configure_faults("bytes:1m"), "");
  EXPECT_EQ(this->Image(1024, 512, &err), nullptr);  // 2 MiB
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(this->ctl_->snapshot().faults_fired, 3u);
  ASSERT_EQ(this->ctl_->configure_faults(""), "");
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  this->Teardown();
}

TYPED_TEST(Images, ObjectGraphAndLiveCounts) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err;
  cl_mem img = this->Image(4, 4);
  cl_sampler s = d->clCreateSampler(this->ctx_, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  // The application drops its context: the image and the sampler keep it.
  d->clReleaseCommandQueue(this->q_);
  this->q_ = nullptr;
  EXPECT_EQ(d->clReleaseContext(this->ctx_), CL_SUCCESS);
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, nullptr), CL_SUCCESS);
  EXPECT_EQ(d->clRetainContext(c), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseContext(c), CL_SUCCESS);
  auto snap = this->ctl_->snapshot();
  EXPECT_EQ(snap.live.at("context"), 1u);
  EXPECT_EQ(snap.live.at("sampler"), 1u);
  EXPECT_EQ(snap.live.at("mem"), 1u);
  EXPECT_EQ(d->clReleaseMemObject(img), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseSampler(s), CL_SUCCESS);
  snap = this->ctl_->snapshot();
  EXPECT_EQ(snap.live.at("context"), 0u);
  EXPECT_EQ(snap.live.at("sampler"), 0u);
  this->ctx_ = nullptr;
}

TYPED_TEST(Images, NoBackingDeviceMeansNoImages) {
  ASSERT_EQ(this->ctl_->configure_backing("none"), "");
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_bool support = CL_TRUE;
  ASSERT_EQ(d->clGetDeviceInfo(this->devices_[0], CL_DEVICE_IMAGE_SUPPORT, sizeof support, &support,
                               nullptr),
            CL_SUCCESS);
  EXPECT_EQ(support, CL_FALSE);
  cl_uint n = 7;
  ASSERT_EQ(d->clGetSupportedImageFormats(this->ctx_, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0,
                                          nullptr, &n),
            CL_SUCCESS);
  EXPECT_EQ(n, 0u);
  cl_int err = 0;
  EXPECT_EQ(this->Image(4, 4, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  EXPECT_EQ(d->clCreateSampler(this->ctx_, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  this->Teardown();
}

// The exit report names what the application never released, images and samplers included. Run
// in a re-executed child ("threadsafe" death tests): POCL's threads do not survive a plain fork.
TEST(ImagesAtExit, LeakReportCountsImagesAndSamplers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto leak = [] {
    Backend b = ThroughLoader::get();
    if (b.ctl->configure_backing("pocl") != "" || b.ctl->configure_devices("gpu-64m") != "")
      std::exit(3);
    cl_device_id dev;
    if (b.d->clGetDeviceIDs(b.platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) != CL_SUCCESS)
      std::exit(4);
    cl_int err;
    cl_context ctx = b.d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    cl_image_format f{CL_RGBA, CL_UNORM_INT8};
    b.d->clCreateImage2D(ctx, CL_MEM_READ_WRITE, &f, 4, 4, 0, nullptr, &err);
    if (err != CL_SUCCESS) std::exit(5);
    b.d->clCreateSampler(ctx, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &err);
    if (err != CL_SUCCESS) std::exit(6);
    b.d->clReleaseContext(ctx);  // The image and the sampler keep it.
    std::exit(0);
  };
  EXPECT_EXIT(leak(), ::testing::ExitedWithCode(0),
              "objects alive at process exit: context=1 mem=1 \\(images=1\\) sampler=1");
}

}  // namespace
}  // namespace mockcl_battery
