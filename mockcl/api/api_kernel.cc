// Kernels. With no backing device kernels are timed no-ops; their arguments come from the
// signature read from the program's source (kernel_signature.h): count, info, and clSetKernelArg's
// checks. Without a signature (a binary, or a fallback) any index below 64 and any size is taken,
// and an argument counts as a buffer if its value is a live mock cl_mem handle. In backing mode
// POCL's twin kernel says how many arguments there are, checks the values and answers the queries
// (program_backing.cc), after the same signature checks; the values are kept for the launch, which
// hands them to POCL when the command executes.
#include <algorithm>
#include <cstring>

#include "mockcl/api/retain_release.h"
#include "mockcl/backing/compute_shape.h"
#include "mockcl/backing/program_backing.h"
#include "mockcl/compiler/language.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

// Whether a program's kernels need global sizes that local sizes divide: on a device without
// CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT (POCL's, in backing mode), for OpenCL C before 2.0 (the
// default when no -cl-std names 2.0 or 3.0), or with -cl-uniform-work-group-size.
bool uniform_work_groups(const std::string& options) {
  if (!device_language().non_uniform_work_groups) return true;
  const bool cl2_or_3 = options.find("-cl-std=CL2.0") != std::string::npos ||
                        options.find("-cl-std=CL3.0") != std::string::npos;
  return !cl2_or_3 || options.find("-cl-uniform-work-group-size") != std::string::npos;
}

_cl_kernel* new_kernel(_cl_program* p, const std::string& name) {
  _cl_kernel* k = rt().objects.create<_cl_kernel>();
  k->program = p;
  rt().hold(p);
  ++p->kernels;
  k->name = name;
  k->args.clear();
  const kernel_signature* sig = find_sorted_signature(p->signatures, name);
  k->has_sig = sig != nullptr;
  k->sig = sig ? *sig : kernel_signature{};
  if (sig) k->args.assign(sig->args.size(), kernel_arg{});
  return k;
}

// new_kernel and, in backing mode, its POCL twin; null with `s` set if POCL refuses.
_cl_kernel* make_kernel(_cl_program* p, const std::string& name, cl_int& s) {
  _cl_kernel* k = new_kernel(p, name);
  s = CL_SUCCESS;
  if (rt().pocl && (s = pocl_create_kernel(rt(), k))) {
    --p->kernels;
    rt().release(k, CL_INVALID_KERNEL);
    return nullptr;
  }
  // POCL counts the arguments; a signature that disagrees (a macro the reader took otherwise) is
  // dropped.
  if (k->has_sig && k->sig.args.size() != k->args.size()) k->has_sig = false;
  // The device's limit (every preset's and POCL's device's is the same for all of a context's
  // devices), and in backing mode at most POCL's kernel's.
  const size_t device_max = device_shape(rt().devices[p->context->device0].cfg.gpu).max_work_group;
  k->max_work_group = device_max;
  for (size_t& r : k->reqd_work_group) r = 0;
  k->uniform_work_groups = uniform_work_groups(p->options);
  if (rt().pocl) {
    pocl_work_group_info(rt(), k, CL_KERNEL_WORK_GROUP_SIZE, sizeof k->max_work_group,
                         &k->max_work_group, nullptr);
    pocl_work_group_info(rt(), k, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof k->reqd_work_group,
                         k->reqd_work_group, nullptr);
    k->max_work_group = std::min(k->max_work_group, device_max);
  }
  return k;
}

cl_kernel CL_API_CALL CreateKernel(cl_program h, const char* name, cl_int* err) {
  api_call c(rt(), entry_point::clCreateKernel);
  if (cl_int f = c.fault()) return c.fail<cl_kernel>(err, f);
  _cl_program* p = rt().program(h);
  if (!p) return c.fail<cl_kernel>(err, CL_INVALID_PROGRAM);
  if (!p->built) return c.fail<cl_kernel>(err, CL_INVALID_PROGRAM_EXECUTABLE);
  if (!name) return c.fail<cl_kernel>(err, CL_INVALID_VALUE);
  bool known = p->kernel_names.empty();
  for (const auto& k : p->kernel_names) known = known || k == name;
  if (!known || (rt().pocl && p->kernel_names.empty()))
    return c.fail<cl_kernel>(err, CL_INVALID_KERNEL_NAME);
  cl_int s;
  _cl_kernel* k = make_kernel(p, name, s);
  if (!k) return c.fail<cl_kernel>(err, s);
  c.handle("ret", k);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return k;
}

cl_int CL_API_CALL CreateKernelsInProgram(cl_program h, cl_uint num, cl_kernel* out,
                                          cl_uint* num_ret) {
  api_call c(rt(), entry_point::clCreateKernelsInProgram);
  _cl_program* p = rt().program(h);
  if (!p) return c.ret(CL_INVALID_PROGRAM);
  if (!p->built) return c.ret(CL_INVALID_PROGRAM_EXECUTABLE);
  if (out && num < p->kernel_names.size()) return c.ret(CL_INVALID_VALUE);
  if (out) {
    for (size_t i = 0; i < p->kernel_names.size(); ++i) {
      cl_int s;
      out[i] = make_kernel(p, p->kernel_names[i], s);
      if (s) {
        for (size_t j = 0; j < i; ++j) {
          --p->kernels;
          rt().release(out[j], CL_INVALID_KERNEL);
        }
        return c.ret(s);
      }
    }
  }
  if (num_ret) *num_ret = static_cast<cl_uint>(p->kernel_names.size());
  return c.ret(CL_SUCCESS);
}

// A new kernel of the same program and function with the source's argument values (and, in
// backing mode, its own POCL twin: the values reach POCL at each launch).
cl_kernel CL_API_CALL CloneKernel(cl_kernel h, cl_int* err) {
  api_call c(rt(), entry_point::clCloneKernel);
  if (cl_int f = c.fault()) return c.fail<cl_kernel>(err, f);
  _cl_kernel* src = rt().kernel(h);
  if (!src) return c.fail<cl_kernel>(err, CL_INVALID_KERNEL);
  cl_int s;
  _cl_kernel* k = make_kernel(src->program, src->name, s);
  if (!k) return c.fail<cl_kernel>(err, s);
  k->args = src->args;
  c.handle("ret", k);
  if (err) *err = CL_SUCCESS;
  c.ret(CL_SUCCESS);
  return k;
}

kernel_arg* arg_slot(_cl_kernel* k, cl_uint index) {
  if (index >= 64) return nullptr;
  if (k->args.size() <= index) k->args.resize(index + 1);
  return &k->args[index];
}

// The mock handle a cl_mem-sized argument value names, if it is a live buffer of ours.
_cl_mem* mem_value(size_t size, const void* value) {
  if (size != sizeof(cl_mem) || !value) return nullptr;
  cl_mem m;
  std::memcpy(&m, value, sizeof m);
  // Only a pointer into our own mem slab can be read safely as a handle.
  return m && rt().objects.is_mem_slot(m) && m->in_use && !m->released ? m : nullptr;
}

// clSetKernelArg's rules for an argument of known signature (OpenCL 3.0), in both modes.
cl_int check_arg(const kernel_arg_signature& a, size_t size, const void* value) {
  switch (a.kind) {
    case arg_kind::local:
      if (value) return CL_INVALID_ARG_VALUE;
      return size == 0 ? CL_INVALID_ARG_SIZE : CL_SUCCESS;
    case arg_kind::pointer: {
      if (size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
      cl_mem m = nullptr;
      if (value) std::memcpy(&m, value, sizeof m);
      if (!m) return CL_SUCCESS;  // NULL: no buffer.
      _cl_mem* buffer = mem_value(size, value);
      return buffer && !buffer->is_image() ? CL_SUCCESS
                                           : CL_INVALID_MEM_OBJECT;  // An image is no buffer.
    }
    case arg_kind::image: {  // Only backing mode with images has them (api_image.cc).
      if (size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
      if (!value) return CL_INVALID_ARG_VALUE;
      _cl_mem* m = mem_value(size, value);
      return m && m->is_image() ? CL_SUCCESS : CL_INVALID_MEM_OBJECT;
    }
    case arg_kind::pipe:  // The mock has none: no value is one.
      if (size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
      return value ? CL_INVALID_MEM_OBJECT : CL_INVALID_ARG_VALUE;
    case arg_kind::sampler: {
      if (size != sizeof(cl_sampler)) return CL_INVALID_ARG_SIZE;
      cl_sampler sm = nullptr;
      if (value) std::memcpy(&sm, value, sizeof sm);
      const bool ours = sm && rt().objects.is_sampler_slot(sm) && sm->in_use && !sm->released;
      return ours ? CL_SUCCESS : CL_INVALID_SAMPLER;
    }
    case arg_kind::value:
      if (size != a.size) return CL_INVALID_ARG_SIZE;
      return value ? CL_SUCCESS : CL_INVALID_ARG_VALUE;
    case arg_kind::opaque:
      if (size == 0) return CL_INVALID_ARG_SIZE;
      return value ? CL_SUCCESS : CL_INVALID_ARG_VALUE;
  }
  return CL_SUCCESS;
}

cl_int CL_API_CALL SetKernelArg(cl_kernel h, cl_uint index, size_t size, const void* value) {
  api_call c(rt(), entry_point::clSetKernelArg);
  _cl_kernel* k = rt().kernel(h);
  if (!k) return c.ret(CL_INVALID_KERNEL);
  if (k->has_sig) {
    if (index >= k->sig.args.size()) return c.ret(CL_INVALID_ARG_INDEX);
    if (cl_int s = check_arg(k->sig.args[index], size, value)) return c.ret(s);
  }
  if (rt().pocl) return c.ret(pocl_set_arg(rt(), k, index, size, value));
  kernel_arg* a = arg_slot(k, index);
  if (!a) return c.ret(CL_INVALID_ARG_INDEX);
  a->set = true;
  a->mem = nullptr;
  a->svm = nullptr;
  a->svm_arg = false;
  if (k->has_sig) {  // Only a buffer parameter holds a buffer.
    if (k->sig.args[index].kind == arg_kind::pointer) a->mem = mem_value(size, value);
  } else {
    a->mem = mem_value(size, value);
  }
  return c.ret(CL_SUCCESS);
}

cl_int CL_API_CALL SetKernelArgSVMPointer(cl_kernel h, cl_uint index, const void* value) {
  api_call c(rt(), entry_point::clSetKernelArgSVMPointer);
  _cl_kernel* k = rt().kernel(h);
  if (!k) return c.ret(CL_INVALID_KERNEL);
  if (k->has_sig && (index >= k->sig.args.size() || k->sig.args[index].kind != arg_kind::pointer))
    return c.ret(CL_INVALID_ARG_INDEX);  // Not a global or constant pointer parameter.
  // Backing mode: the argument slots are POCL's; SVM blocks are POCL's SVM (backing.cc).
  if (rt().pocl && index >= k->args.size()) return c.ret(CL_INVALID_ARG_INDEX);
  kernel_arg* a = arg_slot(k, index);
  if (!a) return c.ret(CL_INVALID_ARG_INDEX);
  a->set = true;
  a->mem = nullptr;
  a->svm = const_cast<void*>(value);
  a->svm_arg = true;  // NULL too, in both modes (as POCL takes it)
  a->size = 0;
  a->value.clear();
  if (value && !rt().find_svm(value)) return c.ret(CL_INVALID_ARG_VALUE);
  return c.ret(CL_SUCCESS);
}

// Taken and not acted on, in both modes (README.md: not forwarded to POCL). The parameter must be
// one OpenCL 3.0 defines, as mockcl's devices list no extension that adds one: another is
// CL_INVALID_VALUE, as the specification says (POCL takes any).
cl_int CL_API_CALL SetKernelExecInfo(cl_kernel h, cl_kernel_exec_info param, size_t, const void*) {
  api_call c(rt(), entry_point::clSetKernelExecInfo);
  if (!rt().kernel(h)) return c.ret(CL_INVALID_KERNEL);
  if (param != CL_KERNEL_EXEC_INFO_SVM_PTRS && param != CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM)
    return c.ret(CL_INVALID_VALUE);
  return c.ret(CL_SUCCESS);
}

cl_int CL_API_CALL GetKernelInfo(cl_kernel h, cl_kernel_info param, size_t size, void* value,
                                 size_t* size_ret) {
  api_call c(rt(), entry_point::clGetKernelInfo);
  _cl_kernel* k = rt().kernel(h);
  if (!k) return c.ret(CL_INVALID_KERNEL);
  auto v = [&](auto x) { return c.ret(set_info_v(size, value, size_ret, x)); };
  switch (param) {
    case CL_KERNEL_FUNCTION_NAME:
      return c.ret(set_info_s(size, value, size_ret, k->name));
    case CL_KERNEL_NUM_ARGS:
      return v(static_cast<cl_uint>(k->args.size()));
    case CL_KERNEL_REFERENCE_COUNT:
      return v(cl_uint{k->refs + k->holds});
    case CL_KERNEL_CONTEXT:
      return v(k->program->context);
    case CL_KERNEL_PROGRAM:
      return v(k->program);
    case CL_KERNEL_ATTRIBUTES:
      if (rt().pocl) return c.ret(pocl_kernel_info(rt(), k, param, size, value, size_ret));
      return c.ret(set_info_s(size, value, size_ret, ""));
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL GetKernelWorkGroupInfo(cl_kernel h, cl_device_id,
                                          cl_kernel_work_group_info param, size_t size, void* value,
                                          size_t* size_ret) {
  api_call c(rt(), entry_point::clGetKernelWorkGroupInfo);
  _cl_kernel* k = rt().kernel(h);
  if (!k) return c.ret(CL_INVALID_KERNEL);
  auto v = [&](auto x) { return c.ret(set_info_v(size, value, size_ret, x)); };
  // The launch check's limit (make_kernel): in backing mode POCL's, at most the device's
  // CL_DEVICE_MAX_WORK_GROUP_SIZE, so a program sizing its work-groups by it can launch them.
  if (param == CL_KERNEL_WORK_GROUP_SIZE) return v(k->max_work_group);
  if (rt().pocl) return c.ret(pocl_work_group_info(rt(), k, param, size, value, size_ret));
  switch (param) {
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: {
      size_t z[3] = {0, 0, 0};
      return c.ret(set_info(size, value, size_ret, z, sizeof z));
    }
    case CL_KERNEL_LOCAL_MEM_SIZE:
    case CL_KERNEL_PRIVATE_MEM_SIZE:
      return v(cl_ulong{0});
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
      return v(size_t{32});
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL GetKernelArgInfo(cl_kernel h, cl_uint index, cl_kernel_arg_info param,
                                    size_t size, void* value, size_t* size_ret) {
  api_call c(rt(), entry_point::clGetKernelArgInfo);
  _cl_kernel* k = rt().kernel(h);
  if (!k) return c.ret(CL_INVALID_KERNEL);
  if (rt().pocl) return c.ret(pocl_kernel_arg_info(rt(), k, index, param, size, value, size_ret));
  // No backing device: the signature read from the source, if the program asked for argument
  // info at build (-cl-kernel-arg-info) and there is one.
  if (k->has_sig && index >= k->sig.args.size()) return c.ret(CL_INVALID_ARG_INDEX);
  if (!k->has_sig || k->program->options.find("-cl-kernel-arg-info") == std::string::npos)
    return c.ret(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
  const kernel_arg_signature& a = k->sig.args[index];
  auto v = [&](auto x) { return c.ret(set_info_v(size, value, size_ret, x)); };
  switch (param) {
    case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
      return v(a.address);
    case CL_KERNEL_ARG_ACCESS_QUALIFIER:
      return v(a.access);
    case CL_KERNEL_ARG_TYPE_NAME:
      return c.ret(set_info_s(size, value, size_ret, a.type_name));
    case CL_KERNEL_ARG_TYPE_QUALIFIER:
      return v(a.type_qualifier);
    case CL_KERNEL_ARG_NAME:
      return c.ret(set_info_s(size, value, size_ret, a.name));
    default:
      return c.ret(CL_INVALID_VALUE);
  }
}

}  // namespace

void fill_kernel(cl_icd_dispatch& d) {
  d.clCreateKernel = CreateKernel;
  d.clCreateKernelsInProgram = CreateKernelsInProgram;
  d.clCloneKernel = CloneKernel;
  d.clRetainKernel = retain<_cl_kernel>;
  d.clReleaseKernel = release<_cl_kernel>;
  d.clSetKernelArg = SetKernelArg;
  d.clSetKernelArgSVMPointer = SetKernelArgSVMPointer;
  d.clSetKernelExecInfo = SetKernelExecInfo;
  d.clGetKernelInfo = GetKernelInfo;
  d.clGetKernelWorkGroupInfo = GetKernelWorkGroupInfo;
  d.clGetKernelArgInfo = GetKernelArgInfo;
}

}  // namespace mockcl
