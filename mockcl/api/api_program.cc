// Programs. With no backing device a build reads the kernels' signatures from the source
// (kernel_signature.h): it fails, with a log, only where that reader refuses the source, and the
// kernel names are the reader's (a binary's are the container's, program_binary.h). In backing mode
// POCL builds and answers (program_backing.cc), and the signatures are read too, for
// clSetKernelArg's checks. Kernels: api_kernel.cc.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "mockcl/api/retain_release.h"
#include "mockcl/backing/program_backing.h"
#include "mockcl/compiler/build_options.h"
#include "mockcl/compiler/language.h"
#include "mockcl/compiler/program_binary.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

// At a successful build of a source program: its kernels' signatures. With no backing device a
// source the reader refuses fails the build, its message the build log, as a compiler's would;
// in backing mode POCL's compiler has the last word and a refused source just has no signatures.
cl_int read_signatures(_cl_program* p) {
  p->build_log.clear();
  p->build_failed = false;
  if (!p->from_source) return CL_SUCCESS;  // A binary's came with it (program_binary.h).
  p->signatures.clear();
  parsed_source parsed =
      parse_kernel_signatures(p->source, build_macros(p->options, device_language()));
  if (!parsed.error.empty()) {
    if (rt().pocl) return CL_SUCCESS;
    p->build_failed = true;
    p->build_log = parsed.error + "\n";
    return CL_BUILD_PROGRAM_FAILURE;
  }
  if (!rt().pocl) {  // The reader's names: a kernel in a comment is not one.
    p->kernel_names.clear();
    std::unordered_set<std::string_view> seen;
    for (const kernel_signature& k : parsed.kernels)
      if (seen.insert(k.name).second) p->kernel_names.push_back(k.name);
  }
  p->signatures = std::move(parsed.kernels);
  sort_signatures(p->signatures);
  return CL_SUCCESS;
}

// A program from source, or (bin non-null) from one of mockcl's binaries: its kernels and their
// signatures are the binary's.
cl_program new_program(api_call& c, _cl_context* ctx, std::string source, cl_int* err,
                       program_binary* bin = nullptr) {
  _cl_program* p = rt().objects.create<_cl_program>();
  p->context = ctx;
  rt().hold(ctx);
  p->source = std::move(source);
  p->options = bin ? std::move(bin->options) : std::string();
  p->kernel_names = bin ? std::move(bin->kernel_names)
                        : scan_kernel_names(p->source, build_macros("", device_language()));
  p->built = false;
  p->compiled = false;
  p->from_source = !bin;
  p->build_failed = false;
  p->build_log.clear();
  p->signatures = bin ? std::move(bin->signatures) : std::vector<kernel_signature>{};
  sort_signatures(p->signatures);  // A container from elsewhere may hold them in any order.
  p->kernels = 0;
  if (rt().pocl) {
    if (cl_int s = pocl_create_program(rt(), p, bin ? &bin->backing : nullptr)) {
      rt().release(p, CL_INVALID_PROGRAM);
      if (err) *err = s;
      c.ret(s);
      return nullptr;
    }
  }
  c.handle("ret", p);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return p;
}

cl_program CL_API_CALL CreateProgramWithSource(cl_context h, cl_uint count, const char** strings,
                                               const size_t* lengths, cl_int* err) {
  api_call c(rt(), entry_point::clCreateProgramWithSource);
  if (cl_int f = c.fault()) return c.fail<cl_program>(err, f);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.fail<cl_program>(err, CL_INVALID_CONTEXT);
  if (count == 0 || !strings) return c.fail<cl_program>(err, CL_INVALID_VALUE);
  std::string src;
  for (cl_uint i = 0; i < count; ++i) {
    if (!strings[i]) return c.fail<cl_program>(err, CL_INVALID_VALUE);
    src += (lengths && lengths[i]) ? std::string(strings[i], lengths[i]) : std::string(strings[i]);
  }
  return new_program(c, ctx, std::move(src), err);
}

cl_program CL_API_CALL CreateProgramWithBinary(cl_context h, cl_uint n, const cl_device_id* devs,
                                               const size_t* lengths, const unsigned char** bins,
                                               cl_int* status, cl_int* err) {
  api_call c(rt(), entry_point::clCreateProgramWithBinary);
  if (cl_int f = c.fault()) return c.fail<cl_program>(err, f);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.fail<cl_program>(err, CL_INVALID_CONTEXT);
  if (n == 0 || !devs || !lengths || !bins) return c.fail<cl_program>(err, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < n; ++i) {
    if (!rt().device(devs[i]) ||
        std::find(ctx->devices.begin(), ctx->devices.end(), devs[i]) == ctx->devices.end())
      return c.fail<cl_program>(err, CL_INVALID_DEVICE);
    if (!bins[i] || lengths[i] == 0) return c.fail<cl_program>(err, CL_INVALID_VALUE);
  }
  // Each device's binary must be one of mockcl's containers (CL_PROGRAM_BINARIES); the program is
  // made from the first (they are the same for every device of a context).
  program_binary first;
  bool all_valid = true;
  for (cl_uint i = 0; i < n; ++i) {
    program_binary b;
    std::string why;
    const bool ok = decode_program_binary(bins[i], lengths[i], i == 0 ? first : b, why);
    if (status) status[i] = ok ? CL_SUCCESS : CL_INVALID_BINARY;
    if (!ok) c.arg("invalid_binary", why);
    all_valid = all_valid && ok;
  }
  if (!all_valid) return c.fail<cl_program>(err, CL_INVALID_BINARY);
  std::string source = std::move(first.source);
  return new_program(c, ctx, std::move(source), err, &first);
}

cl_program CL_API_CALL CreateProgramWithIL(cl_context h, const void* il, size_t length,
                                           cl_int* err) {
  api_call c(rt(), entry_point::clCreateProgramWithIL);
  // mockcl's devices take no intermediate language (CL_DEVICE_IL_VERSION is empty, in both modes),
  // so a valid context gets CL_INVALID_OPERATION whatever the IL (OpenCL 3.0; the CTS's
  // consistency_il_programs). POCL is not asked: the device answers for itself.
  (void)il;
  (void)length;
  const cl_int s = rt().context(h) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
  if (err) *err = s;
  c.ret(s);
  return nullptr;
}

// mockcl's devices have no built-in kernels (CL_DEVICE_BUILT_IN_KERNELS is empty, in both modes),
// so once the context and devices are valid every name is one no device supports:
// CL_INVALID_VALUE, as OpenCL 3.0 lists and POCL answers.
cl_program CL_API_CALL CreateProgramWithBuiltInKernels(cl_context h, cl_uint n,
                                                       const cl_device_id* devs, const char* names,
                                                       cl_int* err) {
  api_call c(rt(), entry_point::clCreateProgramWithBuiltInKernels);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.fail<cl_program>(err, CL_INVALID_CONTEXT);
  if (n == 0 || !devs) return c.fail<cl_program>(err, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < n; ++i)
    if (std::find(ctx->devices.begin(), ctx->devices.end(), devs[i]) == ctx->devices.end())
      return c.fail<cl_program>(err, CL_INVALID_DEVICE);
  (void)names;
  return c.fail<cl_program>(err, CL_INVALID_VALUE);
}

// The arguments clBuildProgram, clCompileProgram and clLinkProgram share (OpenCL 3.0), checked
// before anything reaches POCL, as POCL checks them: a device count without a list or a list
// without a count, and user data without a callback, are CL_INVALID_VALUE; a listed device that
// is not one of the context's (NULL included) is CL_INVALID_DEVICE.
cl_int check_build_args(const _cl_context* ctx, cl_uint n, const cl_device_id* list,
                        bool has_notify, const void* data) {
  if ((n == 0) != (list == nullptr)) return CL_INVALID_VALUE;
  if (!has_notify && data) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < n; ++i)
    if (std::find(ctx->devices.begin(), ctx->devices.end(), list[i]) == ctx->devices.end())
      return CL_INVALID_DEVICE;
  return CL_SUCCESS;
}

// clCompileProgram's embedded headers: a count with no programs or no names, or programs or names
// with no count, is CL_INVALID_VALUE, and so is a NULL name or a handle that is no live program
// (POCL dereferences the names without a check).
cl_int check_headers(cl_uint n, const cl_program* headers, const char** names) {
  if ((n == 0) != (headers == nullptr) || (n == 0) != (names == nullptr)) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < n; ++i)
    if (!names[i] || !rt().program(headers[i])) return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

// What clBuildProgram (`linking`) and clCompileProgram refuse before anything changes: a program
// with kernels the application holds (CL_INVALID_OPERATION: they would lose the executable they
// run), and, with no backing device, options no compiler takes (CL_INVALID_BUILD_OPTIONS, or
// CL_INVALID_COMPILER_OPTIONS for a compile, as POCL answers, with the reason in the build log).
// In backing mode POCL's compiler checks the options.
cl_int check_rebuild(api_call& c, _cl_program* p, const char* options, bool linking) {
  if (p->kernels > 0) return CL_INVALID_OPERATION;
  if (rt().pocl || !options) return CL_SUCCESS;
  const std::string why = invalid_build_option(options, device_language().c_versions, linking);
  if (why.empty()) return CL_SUCCESS;
  c.arg("invalid_options", why);
  p->build_log = "<options>: error: " + why + "\n";
  return linking ? CL_INVALID_BUILD_OPTIONS : CL_INVALID_COMPILER_OPTIONS;
}

cl_int CL_API_CALL BuildProgram(cl_program h, cl_uint n, const cl_device_id* list,
                                const char* options, void(CL_CALLBACK* notify)(cl_program, void*),
                                void* data) {
  api_call c(rt(), entry_point::clBuildProgram);
  if (cl_int f = c.fault()) return c.ret(f);
  _cl_program* p = rt().program(h);
  if (!p) return c.ret(CL_INVALID_PROGRAM);
  if (cl_int s = check_build_args(p->context, n, list, notify != nullptr, data)) return c.ret(s);
  if (cl_int s = check_rebuild(c, p, options, true)) return c.ret(s);
  p->options = options ? options : "";
  cl_int s = rt().pocl ? pocl_build(rt(), p, options, false, 0, nullptr, nullptr) : CL_SUCCESS;
  if (s == CL_SUCCESS) s = read_signatures(p);
  p->built = s == CL_SUCCESS;
  if (notify) rt().defer([notify, p, data] { notify(p, data); });
  return c.ret(s);
}

cl_int CL_API_CALL CompileProgram(cl_program h, cl_uint n, const cl_device_id* list,
                                  const char* options, cl_uint nh, const cl_program* headers,
                                  const char** names, void(CL_CALLBACK* notify)(cl_program, void*),
                                  void* data) {
  api_call c(rt(), entry_point::clCompileProgram);
  _cl_program* p = rt().program(h);
  if (!p) return c.ret(CL_INVALID_PROGRAM);
  if (cl_int s = check_build_args(p->context, n, list, notify != nullptr, data)) return c.ret(s);
  if (cl_int s = check_headers(nh, headers, names)) return c.ret(s);
  if (cl_int s = check_rebuild(c, p, options, false)) return c.ret(s);
  p->options = options ? options : "";
  cl_int s;
  if (rt().pocl) {
    s = pocl_build(rt(), p, options, true, nh, headers, names);
  } else {
    // With no compiler, compiling reads the signatures, as a build does; the link joins them.
    s = read_signatures(p);
    if (s == CL_BUILD_PROGRAM_FAILURE) s = CL_COMPILE_PROGRAM_FAILURE;
  }
  p->compiled = s == CL_SUCCESS;
  if (notify) rt().defer([notify, p, data] { notify(p, data); });
  return c.ret(s);
}

// With no backing device: the compiled inputs' kernels and signatures, joined (a kernel defined
// in two inputs fails the link, as duplicate symbols do). Bodies are never compiled, so a call
// to a function defined in another input links as it would.
cl_int mock_link(_cl_program* p, cl_uint n, const cl_program* inputs) {
  for (cl_uint i = 0; i < n; ++i) {
    const _cl_program* in = inputs[i];
    for (const std::string& name : in->kernel_names) {
      if (std::find(p->kernel_names.begin(), p->kernel_names.end(), name) !=
          p->kernel_names.end()) {
        p->build_failed = true;
        p->build_log =
            "<link>: error: kernel '" + name + "' is defined in more than one input program\n";
        p->kernel_names.clear();
        p->signatures.clear();
        return CL_LINK_PROGRAM_FAILURE;
      }
      p->kernel_names.push_back(name);
    }
    p->signatures.insert(p->signatures.end(), in->signatures.begin(), in->signatures.end());
  }
  sort_signatures(p->signatures);
  return CL_SUCCESS;
}

cl_program CL_API_CALL LinkProgram(cl_context h, cl_uint num_devices, const cl_device_id* list,
                                   const char* options, cl_uint n, const cl_program* inputs,
                                   void(CL_CALLBACK* notify)(cl_program, void*), void* data,
                                   cl_int* err) {
  api_call c(rt(), entry_point::clLinkProgram);
  _cl_context* ctx = rt().context(h);
  if (!ctx) return c.fail<cl_program>(err, CL_INVALID_CONTEXT);
  if (cl_int s = check_build_args(ctx, num_devices, list, notify != nullptr, data))
    return c.fail<cl_program>(err, s);
  if (n == 0 || !inputs) return c.fail<cl_program>(err, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < n; ++i) {
    if (!rt().program(inputs[i]) || (rt().pocl && !inputs[i]->pocl_prog)) {
      return c.fail<cl_program>(err, CL_INVALID_PROGRAM);
    }
    // An input must be compiled (or a built program, which is compiled too).
    if (!rt().pocl && !inputs[i]->compiled && !inputs[i]->built)
      return c.fail<cl_program>(err, CL_INVALID_OPERATION);
  }
  _cl_program* p = rt().objects.create<_cl_program>();
  p->context = ctx;
  rt().hold(ctx);
  p->source.clear();
  p->options = options ? options : "";
  p->kernel_names.clear();
  p->from_source = false;  // Its kernels' signatures are its inputs' (none in backing mode).
  p->compiled = false;
  p->signatures.clear();
  p->build_failed = false;
  p->build_log.clear();
  p->kernels = 0;
  cl_int s;
  if (rt().pocl) {
    s = pocl_link(rt(), p, options, n, inputs);
    if (!p->pocl_prog) {
      rt().release(p, CL_INVALID_PROGRAM);
      return c.fail<cl_program>(err, s);
    }
  } else {
    s = mock_link(p, n, inputs);
  }
  p->built = s == CL_SUCCESS;
  if (notify) rt().defer([notify, p, data] { notify(p, data); });
  c.handle("ret", p);
  if (err) *err = s;
  c.ret(s);
  return p;
}

cl_int CL_API_CALL GetProgramInfo(cl_program h, cl_program_info param, size_t size, void* value,
                                  size_t* size_ret) {
  api_call c(rt(), entry_point::clGetProgramInfo);
  _cl_program* p = rt().program(h);
  if (!p) return c.ret(CL_INVALID_PROGRAM);
  auto v = [&](auto x) { return c.ret(set_info_v(size, value, size_ret, x)); };
  if (rt().pocl && p->pocl_prog) {
    bool handled = false;
    cl_int s = pocl_program_info(rt(), p, param, size, value, size_ret, handled);
    if (handled) return c.ret(s);
  }
  const auto& devs = p->context->devices;
  switch (param) {
    case CL_PROGRAM_REFERENCE_COUNT:
      return v(cl_uint{p->refs + p->holds});
    case CL_PROGRAM_CONTEXT:
      return v(p->context);
    case CL_PROGRAM_NUM_DEVICES:
      return v(static_cast<cl_uint>(devs.size()));
    case CL_PROGRAM_DEVICES:
      return c.ret(
          set_info(size, value, size_ret, devs.data(), devs.size() * sizeof(cl_device_id)));
    case CL_PROGRAM_SOURCE:
      return c.ret(set_info_s(size, value, size_ret, p->source));
    case CL_PROGRAM_IL:
      return c.ret(set_info(size, value, size_ret, nullptr, 0));
    case CL_PROGRAM_BINARY_SIZES:
    case CL_PROGRAM_BINARIES: {
      // The same container for every device (program_binary.h).
      program_binary b{p->source, p->options, p->kernel_names, p->signatures, {}};
      if (rt().pocl && p->pocl_prog) {
        if (cl_int e = pocl_binary(rt(), p, b.backing)) return c.ret(e);
      }
      const std::string bin = encode_program_binary(b);
      if (param == CL_PROGRAM_BINARY_SIZES) {
        std::vector<size_t> sizes(devs.size(), bin.size());
        return c.ret(set_info(size, value, size_ret, sizes.data(), sizes.size() * sizeof(size_t)));
      }
      const size_t n = devs.size() * sizeof(unsigned char*);
      if (value) {
        if (size < n) return c.ret(CL_INVALID_VALUE);
        auto** out = static_cast<unsigned char**>(value);
        for (size_t i = 0; i < devs.size(); ++i)
          if (out[i]) std::memcpy(out[i], bin.data(), bin.size());
      }
      if (size_ret) *size_ret = n;
      return c.ret(CL_SUCCESS);
    }
    case CL_PROGRAM_NUM_KERNELS:
      if (!p->built) return c.ret(CL_INVALID_PROGRAM_EXECUTABLE);  // No executable has kernels.
      return v(p->kernel_names.size());
    case CL_PROGRAM_KERNEL_NAMES: {
      if (!p->built) return c.ret(CL_INVALID_PROGRAM_EXECUTABLE);
      std::string names;
      for (const auto& k : p->kernel_names) names += (names.empty() ? "" : ";") + k;
      return c.ret(set_info_s(size, value, size_ret, names));
    }
    case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
    case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
      return v(cl_bool{CL_FALSE});
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL GetProgramBuildInfo(cl_program h, cl_device_id dev, cl_program_build_info param,
                                       size_t size, void* value, size_t* size_ret) {
  api_call c(rt(), entry_point::clGetProgramBuildInfo);
  _cl_program* p = rt().program(h);
  if (!p) return c.ret(CL_INVALID_PROGRAM);
  // The device must be one of the program's (its context's): NULL is CL_INVALID_DEVICE.
  const auto& devs = p->context->devices;
  if (std::find(devs.begin(), devs.end(), dev) == devs.end()) return c.ret(CL_INVALID_DEVICE);
  if (rt().pocl && p->pocl_prog)
    return c.ret(pocl_build_info(rt(), p, param, size, value, size_ret));
  switch (param) {
    case CL_PROGRAM_BUILD_STATUS: {
      const cl_build_status st = p->built || p->compiled ? CL_BUILD_SUCCESS
                                 : p->build_failed       ? CL_BUILD_ERROR
                                                         : CL_BUILD_NONE;
      return c.ret(set_info_v(size, value, size_ret, st));
    }
    case CL_PROGRAM_BUILD_OPTIONS:
      return c.ret(set_info_s(size, value, size_ret, p->options));
    case CL_PROGRAM_BUILD_LOG:
      return c.ret(set_info_s(size, value, size_ret, p->build_log));
    case CL_PROGRAM_BINARY_TYPE:
      return c.ret(
          set_info_v(size, value, size_ret,
                     cl_program_binary_type(p->built      ? CL_PROGRAM_BINARY_TYPE_EXECUTABLE
                                            : p->compiled ? CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
                                                          : CL_PROGRAM_BINARY_TYPE_NONE)));
    case CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE:
      return c.ret(set_info_v(size, value, size_ret, size_t{0}));
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

}  // namespace

void fill_program(cl_icd_dispatch& d) {
  d.clCreateProgramWithSource = CreateProgramWithSource;
  d.clCreateProgramWithBinary = CreateProgramWithBinary;
  d.clCreateProgramWithIL = CreateProgramWithIL;
  d.clCreateProgramWithBuiltInKernels = CreateProgramWithBuiltInKernels;
  d.clRetainProgram = retain<_cl_program>;
  d.clReleaseProgram = release<_cl_program>;
  d.clBuildProgram = BuildProgram;
  d.clCompileProgram = CompileProgram;
  d.clGetProgramInfo = GetProgramInfo;
  d.clGetProgramBuildInfo = GetProgramBuildInfo;
  d.clLinkProgram = LinkProgram;
}

}  // namespace mockcl
