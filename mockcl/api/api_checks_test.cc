// Argument checks a real driver makes (POCL 3.1 answers each of these the same way), through the
// entry points, in-process and through the loader, in the mode MOCKCL_BACKING gives: battery_test
// runs this file with no backing device, api_checks_backing_test with POCL behind. Found by
// piglit's OpenCL suite and hashcat (issue 43): a property given twice, the device lists of
// clBuildProgram / clCompileProgram / clLinkProgram, user data without a callback, embedded
// headers without names (forwarded to POCL, which crashed), clGetProgramBuildInfo's device, the
// platform's cl_khr_icd function, and a kernel's work-group size above the device's.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "mockcl/battery_fixture.h"

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names

template <typename T>
class ApiChecks : public Battery<T> {
 protected:
  void SetUp() override {
    Battery<T>::SetUp();
    this->Setup("gpu");
    cl_int err;
    const char* src = kSource;
    program_ = this->d_->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    if (program_) {
      EXPECT_EQ(this->d_->clReleaseProgram(program_), CL_SUCCESS);
    }
    this->Teardown();
    Battery<T>::TearDown();
  }
  cl_device_id dev() const { return this->devices_[0]; }
  static constexpr const char* kSource =
      "__kernel void k(__global int* a) { a[get_global_id(0)] = 1; }\n";
  cl_program program_ = nullptr;
};
TYPED_TEST_SUITE(ApiChecks, Backends, BackendNames);

void CL_CALLBACK no_op(cl_program, void*) {}

TYPED_TEST(ApiChecks, AContextPropertyGivenTwiceIsInvalidProperty) {
  const auto platform = reinterpret_cast<cl_context_properties>(this->b_.platform);
  cl_context_properties twice[] = {CL_CONTEXT_PLATFORM, platform, CL_CONTEXT_PLATFORM, platform, 0};
  cl_device_id dev = this->dev();
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(this->d_->clCreateContext(twice, 1, &dev, nullptr, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_PROPERTY);
  err = CL_SUCCESS;
  EXPECT_EQ(this->d_->clCreateContextFromType(twice, CL_DEVICE_TYPE_ALL, nullptr, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_PROPERTY);
  cl_context_properties sync_twice[] = {CL_CONTEXT_INTEROP_USER_SYNC, CL_TRUE,
                                        CL_CONTEXT_INTEROP_USER_SYNC, CL_FALSE, 0};
  err = CL_SUCCESS;
  EXPECT_EQ(this->d_->clCreateContext(sync_twice, 1, &dev, nullptr, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_PROPERTY);
  cl_context_properties once[] = {CL_CONTEXT_PLATFORM, platform, CL_CONTEXT_INTEROP_USER_SYNC,
                                  CL_TRUE, 0};
  cl_context ok = this->d_->clCreateContext(once, 1, &dev, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(this->d_->clReleaseContext(ok), CL_SUCCESS);
}

TYPED_TEST(ApiChecks, BuildAndCompileCheckTheDeviceListAndTheCallback) {
  const cl_device_id dev = this->dev();
  const cl_device_id null_device = nullptr;
  const cl_device_id not_a_device = reinterpret_cast<cl_device_id>(&this->program_);
  const auto* d = this->d_;
  cl_program p = this->program_;
  int data = 0;
  EXPECT_EQ(d->clBuildProgram(p, 1, nullptr, "", nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(d->clBuildProgram(p, 0, &dev, "", nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(d->clBuildProgram(p, 1, &dev, "", nullptr, &data), CL_INVALID_VALUE);
  EXPECT_EQ(d->clBuildProgram(p, 1, &null_device, "", nullptr, nullptr), CL_INVALID_DEVICE);
  EXPECT_EQ(d->clBuildProgram(p, 1, &not_a_device, "", nullptr, nullptr), CL_INVALID_DEVICE);
  EXPECT_EQ(d->clCompileProgram(p, 1, nullptr, "", 0, nullptr, nullptr, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 0, &dev, "", 0, nullptr, nullptr, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 0, nullptr, nullptr, nullptr, &data),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 1, &null_device, "", 0, nullptr, nullptr, nullptr, nullptr),
            CL_INVALID_DEVICE);
  // Nothing was built by the refused calls.
  cl_build_status status = CL_BUILD_SUCCESS;
  ASSERT_EQ(
      d->clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_BUILD_NONE);
  EXPECT_EQ(d->clBuildProgram(p, 1, &dev, "", no_op, &data), CL_SUCCESS);
  EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
}

// piglit's clcompileprogram: headers without names, names without headers, a NULL name. In
// backing mode each reached POCL's clCompileProgram, which dereferenced the NULL names and crashed.
TYPED_TEST(ApiChecks, CompileRefusesHeadersWithoutNames) {
  const auto* d = this->d_;
  const char* header_src = "#define ONE 1\n";
  cl_int err;
  cl_program header = d->clCreateProgramWithSource(this->ctx_, 1, &header_src, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const char* name = "one.h";
  const char* null_name = nullptr;
  cl_program p = this->program_;
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 1, &header, nullptr, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 1, nullptr, &name, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 0, &header, nullptr, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 0, nullptr, &name, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 1, &header, &null_name, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 1, &header, &name, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(d->clReleaseProgram(header), CL_SUCCESS);
}

TYPED_TEST(ApiChecks, LinkChecksTheDeviceListAndTheCallback) {
  const auto* d = this->d_;
  const cl_device_id dev = this->dev();
  const cl_device_id null_device = nullptr;
  ASSERT_EQ(
      d->clCompileProgram(this->program_, 0, nullptr, "", 0, nullptr, nullptr, nullptr, nullptr),
      CL_SUCCESS);
  int data = 0;
  struct bad_call {
    cl_uint n;
    const cl_device_id* list;
    void* data;
    cl_int want;
  };
  for (const bad_call& b :
       {bad_call{1, nullptr, nullptr, CL_INVALID_VALUE},
        bad_call{0, &dev, nullptr, CL_INVALID_VALUE}, bad_call{0, nullptr, &data, CL_INVALID_VALUE},
        bad_call{1, &null_device, nullptr, CL_INVALID_DEVICE}}) {
    cl_int err = CL_SUCCESS;
    EXPECT_EQ(
        d->clLinkProgram(this->ctx_, b.n, b.list, "", 1, &this->program_, nullptr, b.data, &err),
        nullptr);
    EXPECT_EQ(err, b.want) << b.n << " devices";
  }
  EXPECT_EQ(this->ctl_->snapshot().live.at("program"), 1u);  // The refused links made none.
  cl_int err;
  cl_program linked =
      d->clLinkProgram(this->ctx_, 1, &dev, "", 1, &this->program_, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clReleaseProgram(linked), CL_SUCCESS);
}

TYPED_TEST(ApiChecks, BuildInfoNeedsOneOfTheProgramsDevices) {
  const auto* d = this->d_;
  ASSERT_EQ(d->clBuildProgram(this->program_, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_build_status status = CL_BUILD_NONE;
  EXPECT_EQ(d->clGetProgramBuildInfo(this->program_, nullptr, CL_PROGRAM_BUILD_STATUS,
                                     sizeof status, &status, nullptr),
            CL_INVALID_DEVICE);
  EXPECT_EQ(d->clGetProgramBuildInfo(this->program_, this->dev(), CL_PROGRAM_BUILD_STATUS,
                                     sizeof status, &status, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(status, CL_BUILD_SUCCESS);
}

// The platform lists cl_khr_icd, so its function is there (POCL gives its own for the name).
TYPED_TEST(ApiChecks, ThePlatformGivesItsIcdFunction) {
  const auto* d = this->d_;
  using get_ids = cl_int(CL_API_CALL*)(cl_uint, cl_platform_id*, cl_uint*);
  void* f =
      d->clGetExtensionFunctionAddressForPlatform(this->b_.platform, "clIcdGetPlatformIDsKHR");
  ASSERT_NE(f, nullptr);
  cl_platform_id p = nullptr;
  cl_uint n = 0;
  ASSERT_EQ(reinterpret_cast<get_ids>(f)(1, &p, &n), CL_SUCCESS);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(p, this->b_.platform);
  EXPECT_EQ(d->clGetExtensionFunctionAddressForPlatform(this->b_.platform, "clNoSuchFunctionKHR"),
            nullptr);
  EXPECT_EQ(d->clGetExtensionFunctionAddressForPlatform(this->b_.platform, nullptr), nullptr);
}

// A kernel's CL_KERNEL_WORK_GROUP_SIZE is never above the device's CL_DEVICE_MAX_WORK_GROUP_SIZE,
// and a launch of that size is accepted. In backing mode POCL's own was passed through (4096 on
// this machine against the device's 1024), so hashcat's launch sized by it got
// CL_INVALID_WORK_ITEM_SIZE.
TYPED_TEST(ApiChecks, AKernelsWorkGroupSizeFitsTheDevice) {
  const auto* d = this->d_;
  ASSERT_EQ(d->clBuildProgram(this->program_, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_int err;
  cl_kernel k = d->clCreateKernel(this->program_, "k", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  size_t kernel_max = 0, device_max = 0, items[3] = {};
  ASSERT_EQ(d->clGetKernelWorkGroupInfo(k, this->dev(), CL_KERNEL_WORK_GROUP_SIZE,
                                        sizeof kernel_max, &kernel_max, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(d->clGetDeviceInfo(this->dev(), CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof device_max,
                               &device_max, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(
      d->clGetDeviceInfo(this->dev(), CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, nullptr),
      CL_SUCCESS);
  EXPECT_GT(kernel_max, 0u);
  EXPECT_LE(kernel_max, device_max);
  cl_mem m = this->Buf(kernel_max * sizeof(int));
  ASSERT_EQ(d->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  EXPECT_LE(kernel_max, items[0]);
  const size_t local = kernel_max, global = kernel_max;  // One group as large as the kernel takes.
  cl_event e = nullptr;
  ASSERT_EQ(d->clEnqueueNDRangeKernel(this->q_, k, 1, nullptr, &global, &local, 0, nullptr, &e),
            CL_SUCCESS);
  ASSERT_EQ(d->clWaitForEvents(1, &e), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseEvent(e), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseKernel(k), CL_SUCCESS);
}

// A program's kernels are its executable's: with none (never built, or a build that failed) the
// count and the names are CL_INVALID_PROGRAM_EXECUTABLE. With no backing device they answered
// (the names read at creation).
TYPED_TEST(ApiChecks, KernelCountAndNamesNeedAnExecutable) {
  const auto* d = this->d_;
  size_t n = 99;
  char names[64] = "";
  EXPECT_EQ(d->clGetProgramInfo(this->program_, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, nullptr),
            CL_INVALID_PROGRAM_EXECUTABLE);
  EXPECT_EQ(
      d->clGetProgramInfo(this->program_, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr),
      CL_INVALID_PROGRAM_EXECUTABLE);
  ASSERT_EQ(d->clBuildProgram(this->program_, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clGetProgramInfo(this->program_, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(
      d->clGetProgramInfo(this->program_, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr),
      CL_SUCCESS);
  EXPECT_STREQ(names, "k");
  const char* broken = "__kernel void k(__global int* a {}\n";
  cl_int err;
  cl_program failed = d->clCreateProgramWithSource(this->ctx_, 1, &broken, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clBuildProgram(failed, 0, nullptr, "", nullptr, nullptr), CL_BUILD_PROGRAM_FAILURE);
  EXPECT_EQ(d->clGetProgramInfo(failed, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, nullptr),
            CL_INVALID_PROGRAM_EXECUTABLE);
  EXPECT_EQ(d->clGetProgramInfo(failed, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, nullptr),
            CL_INVALID_PROGRAM_EXECUTABLE);
  EXPECT_EQ(d->clReleaseProgram(failed), CL_SUCCESS);
}

// Options no compiler takes are refused (CL_INVALID_BUILD_OPTIONS, CL_INVALID_COMPILER_OPTIONS for
// a compile, as POCL answers) and build nothing; with no backing device any options were taken.
// What real programs pass is taken in both modes (build_options_test has the whole list).
TYPED_TEST(ApiChecks, OptionsNoCompilerTakesAreRefused) {
  const auto* d = this->d_;
  cl_program p = this->program_;
  for (const char* bad : {"-bogus-option", "-cl-std=CL9.9", "-DA stray"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, bad, nullptr, nullptr), CL_INVALID_BUILD_OPTIONS);
    EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, bad, 0, nullptr, nullptr, nullptr, nullptr),
              CL_INVALID_COMPILER_OPTIONS);
  }
  cl_build_status status = CL_BUILD_SUCCESS;
  ASSERT_EQ(d->clGetProgramBuildInfo(p, this->dev(), CL_PROGRAM_BUILD_STATUS, sizeof status,
                                     &status, nullptr),
            CL_SUCCESS);
  EXPECT_NE(status, CL_BUILD_SUCCESS);  // POCL says CL_BUILD_ERROR, mockcl CL_BUILD_NONE.
  for (const char* good :
       {"-I \"/tmp/no such dir\" -I /tmp -D X=1 -DY -w -g", "-cl-std=CL1.2 -cl-kernel-arg-info",
        "-cl-std=CL2.0 -cl-mad-enable -cl-fast-relaxed-math -cl-denorms-are-zero",
        "-cl-std=CL3.0 -cl-opt-disable -cl-uniform-work-group-size -Werror"}) {
    SCOPED_TRACE(good);
    EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, good, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, good, 0, nullptr, nullptr, nullptr, nullptr),
              CL_SUCCESS);
  }
}

// A program whose kernel the application holds is not rebuilt or recompiled under it
// (CL_INVALID_OPERATION); once the kernel is released it is. With no backing device both went on.
TYPED_TEST(ApiChecks, NoRebuildWhileAKernelIsHeld) {
  const auto* d = this->d_;
  cl_program p = this->program_;
  ASSERT_EQ(d->clBuildProgram(p, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_int err;
  cl_kernel k = d->clCreateKernel(p, "k", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, "", nullptr, nullptr), CL_INVALID_OPERATION);
  EXPECT_EQ(d->clCompileProgram(p, 0, nullptr, "", 0, nullptr, nullptr, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(d->clReleaseKernel(k), CL_SUCCESS);
  EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
}

// The devices have no built-in kernels, so any name is CL_INVALID_VALUE (OpenCL 3.0, and POCL's
// answer); the arguments before it are checked as for any creation. It was CL_INVALID_OPERATION,
// which the call's error list does not have.
TYPED_TEST(ApiChecks, NoBuiltInKernelIsKnown) {
  const auto* d = this->d_;
  const cl_device_id dev = this->dev();
  const cl_device_id null_device = nullptr;
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(d->clCreateProgramWithBuiltInKernels(this->ctx_, 1, &dev, "foo", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(d->clCreateProgramWithBuiltInKernels(this->ctx_, 1, &dev, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(d->clCreateProgramWithBuiltInKernels(this->ctx_, 0, &dev, "foo", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(d->clCreateProgramWithBuiltInKernels(this->ctx_, 1, &null_device, "foo", &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_DEVICE);
  EXPECT_EQ(d->clCreateProgramWithBuiltInKernels(nullptr, 1, &dev, "foo", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_CONTEXT);
  EXPECT_EQ(this->ctl_->snapshot().live.at("program"), 1u);  // Only the fixture's.
}

// clSetKernelExecInfo takes the parameters OpenCL 3.0 defines (the devices list no extension that
// adds one) and refuses another with CL_INVALID_VALUE, as the specification says. Any was taken.
TYPED_TEST(ApiChecks, KernelExecInfoTakesOnlyItsParameters) {
  const auto* d = this->d_;
  ASSERT_EQ(d->clBuildProgram(this->program_, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  cl_int err;
  cl_kernel k = d->clCreateKernel(this->program_, "k", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  void* block = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 64, 0);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(d->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof block, &block),
            CL_SUCCESS);
  const cl_bool no = CL_FALSE;
  EXPECT_EQ(d->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof no, &no),
            CL_SUCCESS);
  const cl_uint u = 1;
  EXPECT_EQ(d->clSetKernelExecInfo(k, 0x9999, sizeof u, &u), CL_INVALID_VALUE);
  EXPECT_EQ(d->clSetKernelExecInfo(nullptr, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof block, &block),
            CL_INVALID_KERNEL);
  d->clSVMFree(this->ctx_, block);
  EXPECT_EQ(d->clReleaseKernel(k), CL_SUCCESS);
}

}  // namespace

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names

// At exit the ICD says what the program left, as the program's: the counts (what scripts match),
// then the ids, which the call log's creation lines name; a released context its buffer keeps is
// listed apart. (The in-process runtime has no exit report: it is the ICD's, icd.cc.)
// The child's stderr: the ids it printed, then the report naming them.
class names_its_leaks : public ::testing::MatcherInterface<const std::string&> {
 public:
  bool MatchAndExplain(const std::string& err, ::testing::MatchResultListener*) const override {
    unsigned long long ctx = 0, mem = 0;
    const size_t at = err.find("context ");
    if (at == std::string::npos ||
        std::sscanf(err.c_str() + at, "context %llu, buffer %llu", &ctx, &mem) != 2)
      return false;
    const std::string want =
        "mockcl: objects alive at process exit: context=1 mem=1; the program never released them "
        "(mockcl holds none of its own): context (kept by others: #" +
        std::to_string(ctx) + "); mem #" + std::to_string(mem) + ";\n";
    return err.find(want) != std::string::npos;
  }
  void DescribeTo(std::ostream* os) const override {
    *os << "names the context (kept by the buffer) and the buffer";
  }
};

TEST(ExitReport, NamesWhatTheProgramLeftAsItsOwn) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string log = ::testing::TempDir() + "exit_report_log.jsonl";
  std::remove(log.c_str());
  auto leave = [&log] {
    const Backend b = ThroughLoader::get();
    if (b.ctl->configure_call_log(log) != "") std::exit(2);
    cl_device_id dev;
    if (b.d->clGetDeviceIDs(b.platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) != CL_SUCCESS)
      std::exit(3);
    cl_int err;
    cl_context ctx = b.d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    cl_mem gone = b.d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    cl_mem left = b.d->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    if (err != CL_SUCCESS) std::exit(4);
    b.d->clReleaseMemObject(gone);
    b.d->clReleaseContext(ctx);  // `left` keeps it.
    std::fprintf(stderr, "context %llu, buffer %llu\n",
                 static_cast<unsigned long long>(b.ctl->object_id(ctx)),
                 static_cast<unsigned long long>(b.ctl->object_id(left)));
    std::exit(0);
  };
  EXPECT_EXIT(leave(), ::testing::ExitedWithCode(0),
              ::testing::Matcher<const std::string&>(new names_its_leaks));
  // The call log's report names every id, and each id's creation is a line of the log.
  std::ifstream in(log);
  std::string line, report, all;
  while (std::getline(in, line)) {
    all += line + "\n";
    if (line.find("objects alive at process exit") != std::string::npos) report = line;
  }
  unsigned long long ctx = 0, mem = 0;
  const size_t at = report.find("context (kept by others: #");
  ASSERT_NE(at, std::string::npos) << all;
  ASSERT_EQ(
      std::sscanf(report.c_str() + at, "context (kept by others: #%llu); mem #%llu;", &ctx, &mem),
      2)
      << report;
  EXPECT_NE(all.find("\"call\":\"clCreateContext\",\"args\":{\"ret\":\"context#" +
                     std::to_string(ctx) + "\""),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("\"ret\":\"mem#" + std::to_string(mem) + "\""), std::string::npos) << all;
}

}  // namespace
