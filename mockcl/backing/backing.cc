// The backing device's POCL side: loading POCL's ICD, the lazy POCL twins of mock objects, and
// the commands POCL runs when mockcl's scheduler executes them. See backing.h. Members of
// mock_runtime are called with the lock held; POCL is called under it and waited for before
// returning.
#include "mockcl/backing/backing.h"

#include <dlfcn.h>

#include <cstring>
#include <optional>

#include "common/input_file.h"
#include "common/shared_library.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

constexpr const char* kDefaultIcd = "/etc/OpenCL/vendors/pocl.icd";

std::string trim(std::string s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

_cl_mem* root_of(_cl_mem* m) { return m->parent ? m->parent : m; }

std::string mock_as_driver(const std::string& lib) {
  return "'" + lib +
         "' is mockcl itself, not a driver to back it (MOCKCL_POCL_ICD names POCL's .icd or "
         "library, e.g. /etc/OpenCL/vendors/pocl.icd)";
}

}  // namespace

std::string pocl_library::locate(const std::string& icd, std::string& error) {
  std::string lib = icd.empty() ? kDefaultIcd : icd;
  if (lib.size() > 4 && lib.compare(lib.size() - 4, 4, ".icd") == 0) {
    // One line, the library's path; read with a bound (MOCKCL_POCL_ICD=/dev/zero must not hang).
    std::string why;
    const std::optional<std::string> line = clpool::common::read_first_line(lib, 4096, why);
    if (!line || trim(*line).empty()) {
      error = "cannot read the library's path from '" + lib + "'" + (why.empty() ? "" : ": " + why);
      return "";
    }
    lib = trim(*line);
  }
  // A path is read as ELF before dlopen maps it (a library cut short dies of SIGBUS inside
  // dlopen); a bare name is one the system's loader search finds, as an ICD loader does.
  if (lib.find('/') != std::string::npos) {
    if (std::string why = clpool::common::shared_library_refusal(lib, {}); !why.empty()) {
      error = "'" + lib + "' " + why;
      return "";
    }
    if (clpool::common::defines_symbol(lib, "mockcl_configure")) {
      error = mock_as_driver(lib);
      return "";
    }
  }
  return lib;
}

std::unique_ptr<pocl_library> pocl_library::load(const std::string& icd, std::string& error) {
  const std::string lib = locate(icd, error);
  if (lib.empty()) return nullptr;
  // RTLD_LOCAL, as ICD loaders do: POCL's exported cl* names stay out of the global scope. Never
  // closed (POCL keeps threads).
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    error = "cannot load '" + lib + "': " + (e ? e : "unknown error");
    return nullptr;
  }
  // This very library (or another copy of the mock), found by name: asking it for platforms
  // would come back here, inside this runtime's initialisation.
  if (dlsym(h, "mockcl_configure") != nullptr) {
    error = mock_as_driver(lib);
    return nullptr;
  }
  using get_ids_fn = cl_int(CL_API_CALL*)(cl_uint, cl_platform_id*, cl_uint*);
  // As ICD loaders do: through clGetExtensionFunctionAddress (POCL exports its entry point only as
  // POclIcdGetPlatformIDsKHR), else by name.
  using get_address_fn = void*(CL_API_CALL*)(const char*);
  auto get = reinterpret_cast<get_ids_fn>(dlsym(h, "clIcdGetPlatformIDsKHR"));
  if (auto ext = reinterpret_cast<get_address_fn>(dlsym(h, "clGetExtensionFunctionAddress"));
      !get && ext)
    get = reinterpret_cast<get_ids_fn>(ext("clIcdGetPlatformIDsKHR"));
  if (!get) get = reinterpret_cast<get_ids_fn>(dlsym(h, "clGetPlatformIDs"));
  if (!get) {
    error = "'" + lib + "' gives no clIcdGetPlatformIDsKHR (nor clGetPlatformIDs)";
    return nullptr;
  }
  auto p = std::make_unique<pocl_library>();
  cl_uint n = 0;
  if (get(1, &p->platform, &n) != CL_SUCCESS || n == 0 || !p->platform) {
    error = "'" + lib + "' lists no platform";
    return nullptr;
  }
  p->d = table_of(p->platform);
  if (!p->d || !p->d->clGetDeviceIDs ||
      p->d->clGetDeviceIDs(p->platform, CL_DEVICE_TYPE_ALL, 1, &p->device, &n) != CL_SUCCESS ||
      !p->device) {
    error = "'" + lib + "' has no device";
    return nullptr;
  }
  const char* bad_query = nullptr;
  std::optional<compute_shape> shape = read_shape(*p->d, p->device, bad_query);
  if (!shape) {
    error = "'" + lib + "': its device gives no usable " + bad_query;
    return nullptr;
  }
  p->shape = *shape;
  const language_caps pocls = read_language(*p->d, p->device);
  p->language = decide_language(mock_language(), &pocls);
  if (p->d->clGetDeviceInfo(p->device, CL_DEVICE_SVM_CAPABILITIES, sizeof p->svm_caps, &p->svm_caps,
                            nullptr) != CL_SUCCESS)
    p->svm_caps = 0;
  return p;
}

namespace {

// POCL is not sanitizer-clean when loaded into an instrumented process: there the default is none.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// MOCKCL_POCL_ICD given with MOCKCL_BACKING unset: the user named POCL's ICD, so one that cannot be
// used refuses the platform as with MOCKCL_BACKING=pocl (it was ignored, and mockcl ran without
// POCL). It is loaded now into `lib` (kept for the first context, which still decides); in a
// sanitized build, which never loads POCL, only what locate() checks. Returns the problem or "".
std::string check_named_icd(const std::string& icd, std::unique_ptr<pocl_library>& lib) {
  if (icd.empty() || lib) return "";
  std::string error;
  if (kSanitized)
    pocl_library::locate(icd, error);
  else
    lib = pocl_library::load(icd, error);
  if (error.empty()) return "";
  return "MOCKCL_POCL_ICD='" + icd + "' (MOCKCL_BACKING unset): cannot use POCL: " + error;
}

}  // namespace

std::string mock_runtime::configure_backing(backing_mode mode, const std::string& icd) {
  if (live(object_type::context) != 0) return "configure_backing: refused while contexts are alive";
  if (icd != pocl_icd_) pocl_lib_.reset();  // A different library: load it when needed.
  pocl_icd_ = icd;
  backing_mode_ = mode;
  backing_settled_ = mode != backing_mode::automatic;
  pocl = nullptr;
  if (mode == backing_mode::automatic) return check_named_icd(icd, pocl_lib_);
  if (mode != backing_mode::pocl) return "";
  std::string error;
  if (!pocl_lib_) pocl_lib_ = pocl_library::load(icd, error);
  if (!pocl_lib_) {
    backing_mode_ = backing_mode::none;
    return "MOCKCL_BACKING=pocl: cannot use POCL (MOCKCL_POCL_ICD='" +
           (icd.empty() ? std::string("unset") : icd) + "'): " + error;
  }
  pocl = pocl_lib_.get();
  return "";
}

void mock_runtime::settle_backing_slow() {
  backing_settled_ = true;
  if (kSanitized) return;
  std::string error;
  if (!pocl_lib_) pocl_lib_ = pocl_library::load(pocl_icd_, error);
  pocl = pocl_lib_.get();  // Null: no POCL, no compute (the default's fallback).
}

cl_context mock_runtime::pocl_context(_cl_context* c, cl_int& err) {
  err = CL_SUCCESS;
  if (!c->pocl_ctx) {
    c->pocl_ctx = pocl->d->clCreateContext(nullptr, 1, &pocl->device, nullptr, nullptr, &err);
    if (!c->pocl_ctx) return nullptr;
    c->pocl_q = pocl->d->clCreateCommandQueue(c->pocl_ctx, pocl->device, 0, &err);
    if (!c->pocl_q) {
      pocl->d->clReleaseContext(c->pocl_ctx);
      c->pocl_ctx = nullptr;
      return nullptr;
    }
  }
  return c->pocl_ctx;
}

cl_command_queue mock_runtime::pocl_queue(_cl_command_queue* q, cl_int& err) {
  err = CL_SUCCESS;
  if (!q->pocl_q) {
    cl_context pc = pocl_context(q->context, err);
    if (!pc) return nullptr;
    // In order: mockcl hands POCL one command at a time and waits for it. A profiling queue's twin
    // profiles: its events' START and END are the commands' (mock_runtime::execute).
    q->pocl_q = pocl->d->clCreateCommandQueue(pc, pocl->device,
                                              q->properties & CL_QUEUE_PROFILING_ENABLE, &err);
  }
  return q->pocl_q;
}

cl_mem mock_runtime::pocl_buffer(_cl_mem* m, cl_int& err) {
  err = CL_SUCCESS;
  if (m->pocl_mem) return m->pocl_mem;
  cl_context pc = pocl_context(m->context, err);
  if (!pc) return nullptr;
  if (m->parent) {
    cl_mem root = pocl_buffer(m->parent, err);
    if (!root) return nullptr;
    cl_buffer_region r{m->offset, m->size};
    m->pocl_mem = pocl->d->clCreateSubBuffer(
        root, m->flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY),
        CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    return m->pocl_mem;
  }
  // Access flags stay mockcl's business: POCL's buffer is read-write, so a fill is always allowed.
  cl_mem pm = pocl->d->clCreateBuffer(pc, CL_MEM_READ_WRITE, m->size, nullptr, &err);
  if (!pm) return nullptr;
  // A never-written buffer reads as zeros (POCL's fresh memory is not cleared).
  const cl_uchar zero = 0;
  err = pocl->d->clEnqueueFillBuffer(m->context->pocl_q, pm, &zero, 1, 0, m->size, 0, nullptr,
                                     nullptr);
  if (err == CL_SUCCESS) err = pocl->d->clFinish(m->context->pocl_q);
  if (err != CL_SUCCESS) {
    pocl->d->clReleaseMemObject(pm);
    return nullptr;
  }
  m->pocl_mem = pm;
  return pm;
}

cl_int mock_runtime::pocl_init_buffer(_cl_mem* m, void* host_ptr) {
  cl_int err;
  cl_context pc = pocl_context(m->context, err);
  if (!pc) return err;
  const cl_mem_flags host = m->flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  m->pocl_mem = pocl->d->clCreateBuffer(pc, CL_MEM_READ_WRITE | host, m->size, host_ptr, &err);
  return m->pocl_mem ? CL_SUCCESS : err;
}

cl_int mock_runtime::pocl_transfer(_cl_mem* m, _cl_command_queue* q, bool write, size_t offset,
                                   size_t n, void* host, cl_event* pe) {
  cl_int err;
  cl_command_queue pq = pocl_queue(q, err);
  if (!pq) return err;
  _cl_mem* root = root_of(m);
  cl_mem pm = pocl_buffer(root, err);
  if (!pm) return err;
  offset += m->parent ? m->offset : 0;
  return write ? pocl->d->clEnqueueWriteBuffer(pq, pm, CL_TRUE, offset, n, host, 0, nullptr, pe)
               : pocl->d->clEnqueueReadBuffer(pq, pm, CL_TRUE, offset, n, host, 0, nullptr, pe);
}

bool mock_runtime::pocl_runs(cl_command_type t) {
  switch (t) {
    case CL_COMMAND_READ_BUFFER:
    case CL_COMMAND_WRITE_BUFFER:
    case CL_COMMAND_COPY_BUFFER:
    case CL_COMMAND_FILL_BUFFER:
    case CL_COMMAND_NDRANGE_KERNEL:
    case CL_COMMAND_TASK:
    case CL_COMMAND_READ_BUFFER_RECT:
    case CL_COMMAND_WRITE_BUFFER_RECT:
    case CL_COMMAND_COPY_BUFFER_RECT:
      return true;
    default:
      return is_image_command(t);
  }
}

// The rectangle commands on the root buffers' twins. A sub-buffer side's origin becomes one byte
// offset in its root; every other side keeps its coordinates, because POCL's overlap check for a
// copy within one buffer reasons on (x, y, z) and reports a false CL_MEM_COPY_OVERLAP for
// flattened origins (the CTS's bufferreadwriterect found it).
cl_int mock_runtime::pocl_rect(_cl_event* ev, cl_command_queue pq, cl_event* pe) {
  const cl_icd_dispatch& d = *pocl->d;
  cl_int err;
  _cl_mem* m = ev->mems[0];
  cl_mem pm = pocl_buffer(root_of(m), err);
  if (!pm) return err;
  auto origin = [&](const rect_side& side, const _cl_mem* of, size_t out[3]) {
    if (!of || !of->parent) {
      for (int i = 0; i < 3; ++i) out[i] = side.origin[i];
      return;
    }
    size_t first = 0, end = 0;
    rect_extent(side, ev->region, first, end);
    out[0] = first + of->offset;
    out[1] = out[2] = 0;
  };
  const rect_side& s = ev->rect_src;
  const rect_side& t = ev->rect_dst;
  size_t so[3], to[3];
  if (ev->command_type == CL_COMMAND_COPY_BUFFER_RECT) {
    cl_mem pt = pocl_buffer(root_of(ev->mems[1]), err);
    if (!pt) return err;
    origin(s, m, so);
    origin(t, ev->mems[1], to);
    err = d.clEnqueueCopyBufferRect(pq, pm, pt, so, to, ev->region, s.row_pitch, s.slice_pitch,
                                    t.row_pitch, t.slice_pitch, 0, nullptr, pe);
  } else if (ev->command_type == CL_COMMAND_READ_BUFFER_RECT) {
    origin(s, m, so);
    origin(t, nullptr, to);
    err = d.clEnqueueReadBufferRect(pq, pm, CL_TRUE, so, to, ev->region, s.row_pitch, s.slice_pitch,
                                    t.row_pitch, t.slice_pitch, ev->host, 0, nullptr, pe);
  } else {
    origin(t, m, to);
    origin(s, nullptr, so);
    err =
        d.clEnqueueWriteBufferRect(pq, pm, CL_TRUE, to, so, ev->region, t.row_pitch, t.slice_pitch,
                                   s.row_pitch, s.slice_pitch, ev->host, 0, nullptr, pe);
  }
  if (err == CL_SUCCESS) err = d.clFinish(pq);
  return err;
}

// A kernel launch: its arguments on POCL's twins (buffers, SVM pointers, samplers, values), then
// the range; an empty range does no work.
cl_int mock_runtime::pocl_kernel(_cl_event* ev, cl_command_queue pq, cl_event* pe) {
  const cl_icd_dispatch& d = *pocl->d;
  cl_int err = CL_SUCCESS;
  cl_kernel pk = ev->kernel->pocl_kernel;
  for (size_t i = 0; i < ev->args.size(); ++i) {
    const kernel_arg& a = ev->args[i];
    if (a.mem) {
      cl_mem pm = pocl_buffer(a.mem, err);
      if (!pm) return err;
      err = d.clSetKernelArg(pk, static_cast<cl_uint>(i), sizeof(cl_mem), &pm);
    } else if (a.svm_arg) {
      err = d.clSetKernelArgSVMPointer(pk, static_cast<cl_uint>(i), a.svm);
    } else if (a.sampler) {
      cl_sampler ps = a.sampler->pocl_sampler;
      err = d.clSetKernelArg(pk, static_cast<cl_uint>(i), sizeof ps, &ps);
    } else {
      err = d.clSetKernelArg(pk, static_cast<cl_uint>(i), a.size,
                             a.value.empty() ? nullptr : a.value.data());
    }
    if (err != CL_SUCCESS) return err;
  }
  for (cl_uint i = 0; i < ev->dims; ++i)
    if (ev->work[3 + i] == 0) return CL_SUCCESS;  // An empty range (valid since 2.1): no work.
  err =
      d.clEnqueueNDRangeKernel(pq, pk, ev->dims, ev->has_offset ? ev->work : nullptr, ev->work + 3,
                               ev->has_local ? ev->work + 6 : nullptr, 0, nullptr, pe);
  if (err == CL_SUCCESS) err = d.clFinish(pq);
  return err;
}

cl_int mock_runtime::pocl_execute(_cl_event* ev, cl_event* pe) {
  cl_int err;
  cl_command_queue pq = pocl_queue(ev->queue, err);
  if (!pq) return err;
  const cl_icd_dispatch& d = *pocl->d;
  switch (ev->command_type) {
    case CL_COMMAND_READ_BUFFER:
      return pocl_transfer(ev->mems[0], ev->queue, false, ev->offset, ev->bytes, ev->host, pe);
    case CL_COMMAND_WRITE_BUFFER:
      return pocl_transfer(ev->mems[0], ev->queue, true, ev->offset, ev->bytes, ev->host, pe);
    case CL_COMMAND_COPY_BUFFER: {
      _cl_mem* s = ev->mems[0];
      _cl_mem* t = ev->mems[1];
      cl_mem ps = pocl_buffer(root_of(s), err);
      if (!ps) return err;
      cl_mem pt = pocl_buffer(root_of(t), err);
      if (!pt) return err;
      err = d.clEnqueueCopyBuffer(pq, ps, pt, ev->src_offset + (s->parent ? s->offset : 0),
                                  ev->offset + (t->parent ? t->offset : 0), ev->bytes, 0, nullptr,
                                  pe);
      break;
    }
    case CL_COMMAND_FILL_BUFFER: {
      _cl_mem* m = ev->mems[0];
      cl_mem pm = pocl_buffer(root_of(m), err);
      if (!pm) return err;
      err = d.clEnqueueFillBuffer(pq, pm, ev->pattern.data(), ev->pattern.size(),
                                  ev->offset + (m->parent ? m->offset : 0), ev->bytes, 0, nullptr,
                                  pe);
      break;
    }
    case CL_COMMAND_READ_BUFFER_RECT:
    case CL_COMMAND_WRITE_BUFFER_RECT:
    case CL_COMMAND_COPY_BUFFER_RECT:
      return pocl_rect(ev, pq, pe);
    case CL_COMMAND_NDRANGE_KERNEL:
    case CL_COMMAND_TASK:
      return pocl_kernel(ev, pq, pe);
    default:
      return is_image_command(ev->command_type) ? pocl_image_command(ev, pq) : CL_SUCCESS;
  }
  if (err == CL_SUCCESS) err = d.clFinish(pq);
  return err;
}

void* mock_runtime::pocl_svm_alloc(_cl_context* ctx, cl_svm_mem_flags flags, size_t size,
                                   cl_uint alignment) {
  cl_int err;
  cl_context pc = pocl_context(ctx, err);
  if (!pc || !pocl->d->clSVMAlloc) return nullptr;
  void* p = pocl->d->clSVMAlloc(pc, flags, size, alignment);
  // POCL's device is the CPU: its SVM is host memory, which mockcl's SVM commands use directly.
  if (p) std::memset(p, 0, size);
  return p;
}

void mock_runtime::pocl_svm_free(_cl_context* ctx, void* p) {
  if (pocl && ctx->pocl_ctx) pocl->d->clSVMFree(ctx->pocl_ctx, p);
}

void mock_runtime::pocl_drop(object_header* o) {
  if (!pocl) return;
  const cl_icd_dispatch& d = *pocl->d;
  switch (o->type) {
    case object_type::context: {
      auto* c = static_cast<_cl_context*>(o);
      if (c->pocl_q) d.clReleaseCommandQueue(c->pocl_q);
      if (c->pocl_ctx) d.clReleaseContext(c->pocl_ctx);
      c->pocl_q = nullptr;
      c->pocl_ctx = nullptr;
      break;
    }
    case object_type::queue: {
      auto* q = static_cast<_cl_command_queue*>(o);
      if (q->pocl_q) d.clReleaseCommandQueue(q->pocl_q);
      q->pocl_q = nullptr;
      break;
    }
    case object_type::mem: {
      auto* m = static_cast<_cl_mem*>(o);
      if (m->pocl_mem) d.clReleaseMemObject(m->pocl_mem);
      m->pocl_mem = nullptr;
      break;
    }
    case object_type::program: {
      auto* p = static_cast<_cl_program*>(o);
      if (p->pocl_prog) d.clReleaseProgram(p->pocl_prog);
      p->pocl_prog = nullptr;
      break;
    }
    case object_type::kernel: {
      auto* k = static_cast<_cl_kernel*>(o);
      if (k->pocl_kernel) d.clReleaseKernel(k->pocl_kernel);
      k->pocl_kernel = nullptr;
      break;
    }
    case object_type::sampler: {
      auto* s = static_cast<_cl_sampler*>(o);
      if (s->pocl_sampler) d.clReleaseSampler(s->pocl_sampler);
      s->pocl_sampler = nullptr;
      break;
    }
    default:
      break;
  }
}

}  // namespace mockcl
