// Backing mode, programs and kernels: POCL builds the source and answers what only a compiler
// knows (build status and log, binaries, kernel names, argument counts and info, work-group
// info); mockcl keeps the handles, lifetimes, contexts and devices. See program_backing.h.
#include "mockcl/backing/program_backing.h"

#include <cstring>

#include "mockcl/compiler/pocl_binary_check.h"

namespace mockcl {
namespace {

// POCL's kernel names of a built program ("a;b" split).
std::vector<std::string> kernel_names(const pocl_library& pocl, cl_program pp) {
  size_t n = 0;
  if (pocl.d->clGetProgramInfo(pp, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &n) != CL_SUCCESS || n == 0)
    return {};
  std::string s(n, '\0');
  if (pocl.d->clGetProgramInfo(pp, CL_PROGRAM_KERNEL_NAMES, n, s.data(), nullptr) != CL_SUCCESS)
    return {};
  s.resize(std::strlen(s.c_str()));
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find(';', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<cl_program> twins(cl_uint n, const cl_program* progs) {
  std::vector<cl_program> out;
  for (cl_uint i = 0; i < n; ++i) out.push_back(progs[i]->pocl_prog);
  return out;
}

}  // namespace

cl_int pocl_create_program(mock_runtime& rt, _cl_program* p, const std::string* binary) {
  cl_int err;
  cl_context pc = rt.pocl_context(p->context, err);
  if (!pc) return err;
  const cl_icd_dispatch& d = *rt.pocl->d;
  std::string why;
  // Only a binary whose sizes were checked reaches POCL (pocl_binary_check.h; the container's
  // decode refused a corrupt one); one of another format version is rebuilt from the source.
  if (binary && !binary->empty() &&
      check_pocl_binary(reinterpret_cast<const unsigned char*>(binary->data()), binary->size(),
                        why) == pocl_binary_verdict::sound) {
    auto* bin = reinterpret_cast<const unsigned char*>(binary->data());
    const size_t size = binary->size();
    cl_int status = CL_SUCCESS;
    p->pocl_prog = d.clCreateProgramWithBinary(pc, 1, &rt.pocl->device, &size, &bin, &status, &err);
    // A POCL binary this POCL refuses (another version, another device) is rebuilt from the
    // source the container carries, as a driver rebuilds a stale cached binary.
    if (p->pocl_prog || p->source.empty()) return p->pocl_prog ? CL_SUCCESS : err;
  } else if (binary && !binary->empty() && p->source.empty()) {
    return CL_INVALID_BINARY;  // nothing to rebuild from
  }
  // Without images (POCL's device has none, language.h) POCL's compiler still predefines the
  // image macros for its own device, so a program testing them would take an image path the
  // device says it lacks (the CTS's kernel_preprocessor_macros checks exactly this). POCL refuses
  // -U in build options, so the source starts by undefining them; `#line 1` keeps the build log's
  // line numbers the user's. CL_PROGRAM_SOURCE still returns p->source.
  if (device_language().images) {
    const char* src = p->source.c_str();
    const size_t length = p->source.size();
    p->pocl_prog = d.clCreateProgramWithSource(pc, 1, &src, &length, &err);
    return p->pocl_prog ? CL_SUCCESS : err;
  }
  static constexpr char kNoImages[] =
      "#undef __IMAGE_SUPPORT__\n#undef __opencl_c_images\n#undef __opencl_c_read_write_images\n"
      "#undef __opencl_c_3d_image_writes\n#line 1\n";
  const char* parts[2] = {kNoImages, p->source.c_str()};
  const size_t lengths[2] = {sizeof kNoImages - 1, p->source.size()};
  p->pocl_prog = d.clCreateProgramWithSource(pc, 2, parts, lengths, &err);
  return p->pocl_prog ? CL_SUCCESS : err;
}

cl_int pocl_binary(mock_runtime& rt, _cl_program* p, std::string& out) {
  const cl_icd_dispatch& d = *rt.pocl->d;
  size_t one = 0;
  if (cl_int e =
          d.clGetProgramInfo(p->pocl_prog, CL_PROGRAM_BINARY_SIZES, sizeof one, &one, nullptr))
    return e;
  out.assign(one, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(out.data());
  if (one == 0) return CL_SUCCESS;
  return d.clGetProgramInfo(p->pocl_prog, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr);
}

cl_int pocl_build(mock_runtime& rt, _cl_program* p, const char* options, bool compile_only,
                  cl_uint num_headers, const cl_program* headers, const char** header_names) {
  const cl_icd_dispatch& d = *rt.pocl->d;
  cl_int err;
  if (compile_only) {
    std::vector<cl_program> hs = twins(num_headers, headers);
    err = d.clCompileProgram(p->pocl_prog, 1, &rt.pocl->device, options, num_headers,
                             hs.empty() ? nullptr : hs.data(), header_names, nullptr, nullptr);
  } else {
    err = d.clBuildProgram(p->pocl_prog, 1, &rt.pocl->device, options, nullptr, nullptr);
  }
  if (err == CL_SUCCESS && !compile_only) p->kernel_names = kernel_names(*rt.pocl, p->pocl_prog);
  return err;
}

cl_int pocl_link(mock_runtime& rt, _cl_program* out, const char* options, cl_uint n,
                 const cl_program* inputs) {
  cl_int err;
  cl_context pc = rt.pocl_context(out->context, err);
  if (!pc) return err;
  std::vector<cl_program> in = twins(n, inputs);
  out->pocl_prog = rt.pocl->d->clLinkProgram(pc, 1, &rt.pocl->device, options, n, in.data(),
                                             nullptr, nullptr, &err);
  if (!out->pocl_prog) return err;
  if (err == CL_SUCCESS) out->kernel_names = kernel_names(*rt.pocl, out->pocl_prog);
  return err;
}

cl_int pocl_program_info(mock_runtime& rt, _cl_program* p, cl_program_info param, size_t size,
                         void* value, size_t* size_ret, bool& handled) {
  handled = true;
  switch (param) {
    case CL_PROGRAM_NUM_KERNELS:
    case CL_PROGRAM_KERNEL_NAMES:
    case CL_PROGRAM_IL:
      break;
    default:
      handled = false;
      return CL_SUCCESS;
  }
  const cl_icd_dispatch& d = *rt.pocl->d;
  return d.clGetProgramInfo(p->pocl_prog, param, size, value, size_ret);
}

cl_int pocl_build_info(mock_runtime& rt, _cl_program* p, cl_program_build_info param, size_t size,
                       void* value, size_t* size_ret) {
  return rt.pocl->d->clGetProgramBuildInfo(p->pocl_prog, rt.pocl->device, param, size, value,
                                           size_ret);
}

cl_int pocl_create_kernel(mock_runtime& rt, _cl_kernel* k) {
  const cl_icd_dispatch& d = *rt.pocl->d;
  cl_int err;
  k->pocl_kernel = d.clCreateKernel(k->program->pocl_prog, k->name.c_str(), &err);
  if (!k->pocl_kernel) return err;
  cl_uint n = 0;
  if ((err = d.clGetKernelInfo(k->pocl_kernel, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr)))
    return err;
  k->args.assign(n, kernel_arg{});
  return CL_SUCCESS;
}

cl_int pocl_set_arg(mock_runtime& rt, _cl_kernel* k, cl_uint index, size_t size,
                    const void* value) {
  if (index >= k->args.size()) return CL_INVALID_ARG_INDEX;
  kernel_arg& a = k->args[index];
  cl_mem m = nullptr;
  if (size == sizeof(cl_mem) && value) std::memcpy(&m, value, sizeof m);
  if (size == sizeof(cl_sampler) && value && rt.objects.is_sampler_slot(m)) {
    // One of our samplers: POCL's twin now (POCL checks the argument's type), and again at each
    // launch, which holds the sampler until it has run.
    auto* sm = reinterpret_cast<_cl_sampler*>(m);
    if (!sm->in_use || sm->released) return CL_INVALID_SAMPLER;
    cl_sampler ps = sm->pocl_sampler;
    if (cl_int e = rt.pocl->d->clSetKernelArg(k->pocl_kernel, index, size, &ps)) return e;
    a = kernel_arg{true, nullptr, nullptr, size, {}};
    a.sampler = sm;
    return CL_SUCCESS;
  }
  if (m && rt.objects.is_mem_slot(
               m)) {  // One of ours: a buffer or image argument, translated at the launch.
    if (!m->in_use || m->released) return CL_INVALID_MEM_OBJECT;
    a = kernel_arg{true, m, nullptr, size, {}};
    return CL_SUCCESS;
  }
  // Anything else (scalars, structs, local sizes, a null buffer): POCL checks it now, and gets it
  // again at the launch.
  if (cl_int e = rt.pocl->d->clSetKernelArg(k->pocl_kernel, index, size, value)) return e;
  a = kernel_arg{true, nullptr, nullptr, size, {}};
  if (value)
    a.value.assign(static_cast<const unsigned char*>(value),
                   static_cast<const unsigned char*>(value) + size);
  return CL_SUCCESS;
}

cl_int pocl_kernel_info(mock_runtime& rt, _cl_kernel* k, cl_kernel_info param, size_t size,
                        void* value, size_t* size_ret) {
  return rt.pocl->d->clGetKernelInfo(k->pocl_kernel, param, size, value, size_ret);
}

cl_int pocl_kernel_arg_info(mock_runtime& rt, _cl_kernel* k, cl_uint index,
                            cl_kernel_arg_info param, size_t size, void* value, size_t* size_ret) {
  return rt.pocl->d->clGetKernelArgInfo(k->pocl_kernel, index, param, size, value, size_ret);
}

cl_int pocl_work_group_info(mock_runtime& rt, _cl_kernel* k, cl_kernel_work_group_info param,
                            size_t size, void* value, size_t* size_ret) {
  return rt.pocl->d->clGetKernelWorkGroupInfo(k->pocl_kernel, rt.pocl->device, param, size, value,
                                              size_ret);
}

}  // namespace mockcl
