#include "tools/probe/first_use_matrix.h"

#include <functional>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace clpool::probe {
namespace {

// clSVMAlloc returned NULL: it has no status of its own.
constexpr cl_int svm_null = not_run + 1;
constexpr std::size_t rect_side = 8;  // the rect forms move an 8 x 8 byte region

const char* const kernel_source =
    "__kernel void clpool_first_use_touch(__global uchar* p) { p[0] = 1; }";

// What a case's call is given: the buffer (or SVM block) under test and its size.
struct target {
  cl_mem mem = nullptr;
  void* svm = nullptr;
  std::size_t bytes = 0;
};

class matrix_runner;
using op_fn = std::function<cl_int(matrix_runner&, const target&, cl_event*)>;

struct case_spec {
  const char* name;
  const char* call;
  bool svm;
  op_fn op;  // null: creation alone
};

class matrix_runner {
 public:
  matrix_runner(cl_device_id device, const first_use_sizes& s) : device_(device), sizes_(s) {
    host_.assign(s.small, 0x5a);  // before any OpenCL object: nothing to release if it throws
    cl_int err = CL_SUCCESS;
    ctx_ = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (ctx_ == nullptr)
      throw std::runtime_error("clCreateContext failed with " + std::to_string(err));
    queue_ = clCreateCommandQueueWithProperties(ctx_, device, nullptr, &err);
    if (queue_ == nullptr) {
      clReleaseContext(ctx_);
      throw std::runtime_error("clCreateCommandQueueWithProperties failed with " +
                               std::to_string(err));
    }
    partner_ = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, s.small, nullptr, &err);
    if (partner_ != nullptr) {
      err = clEnqueueMigrateMemObjects(queue_, 1, &partner_, 0, 0, nullptr, nullptr);
      if (err == CL_SUCCESS) err = clFinish(queue_);
    }
    if (partner_ == nullptr || err != CL_SUCCESS) {
      cleanup();
      throw std::runtime_error("the partner buffer of " + std::to_string(s.small) +
                               " B could not be created and used: " + std::to_string(err));
    }
    cl_device_svm_capabilities caps = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr) !=
        CL_SUCCESS) {
      caps = 0;
    }
    svm_ = caps != 0;
    build_kernel();
  }
  ~matrix_runner() { cleanup(); }
  matrix_runner(const matrix_runner&) = delete;
  matrix_runner& operator=(const matrix_runner&) = delete;

  first_use_case run(const case_spec& spec) {
    first_use_case c;
    c.name = spec.name;
    c.call = spec.call;
    if (spec.svm && !svm_) {
      c.note = "the device has no SVM";
      c.create = not_run;
      c.usable_after = usable();
      return c;
    }
    if (needs_kernel(spec) && kernel_ == nullptr) {
      c.note = "no kernel: building it failed with " + std::to_string(kernel_status_);
    }
    attempt(spec, sizes_.big, c);
    first_use_case control;
    attempt(spec, sizes_.small, control);
    c.control =
        control.create == CL_SUCCESS &&
        (spec.op == nullptr || (control.enqueue == CL_SUCCESS && control.finish == CL_SUCCESS &&
                                control.event == CL_COMPLETE));
    c.usable_after = usable();
    return c;
  }

  cl_command_queue queue() const { return queue_; }
  cl_mem partner() const { return partner_; }
  unsigned char* host() { return host_.data(); }
  std::size_t small() const { return sizes_.small; }

  // The touch kernel with `t` as its argument (a buffer or an SVM pointer), or the status that
  // prevented it.
  cl_int set_kernel_arg(const target& t) {
    if (kernel_ == nullptr)
      return kernel_status_ != CL_SUCCESS ? kernel_status_ : CL_INVALID_KERNEL;
    return t.svm != nullptr ? clSetKernelArgSVMPointer(kernel_, 0, t.svm)
                            : clSetKernelArg(kernel_, 0, sizeof(cl_mem), &t.mem);
  }
  cl_kernel kernel() const { return kernel_; }

 private:
  static bool needs_kernel(const case_spec& spec) {
    const std::string call = spec.call;
    return call == "clEnqueueNDRangeKernel" || call == "clEnqueueTask";
  }

  // Creates the case's buffer or block of `bytes`, runs its call, waits, reads the event, and
  // releases everything.
  void attempt(const case_spec& spec, std::size_t bytes, first_use_case& c) {
    target t;
    t.bytes = bytes;
    if (spec.svm) {
      t.svm = clSVMAlloc(ctx_, CL_MEM_READ_WRITE, bytes, 0);
      c.create = t.svm != nullptr ? CL_SUCCESS : svm_null;
    } else {
      t.mem = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &c.create);
      if (t.mem == nullptr && c.create == CL_SUCCESS) c.create = CL_INVALID_MEM_OBJECT;
    }
    if (c.create != CL_SUCCESS || spec.op == nullptr) {
      release(t);
      return;
    }
    cl_event ev = nullptr;
    c.enqueue = spec.op(*this, t, &ev);
    c.finish = clFinish(queue_);
    if (ev != nullptr) {
      cl_int status = CL_COMPLETE;
      if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
          CL_SUCCESS) {
        status = CL_INVALID_EVENT;
      }
      c.event = status;
      clReleaseEvent(ev);
    }
    release(t);
  }

  void release(const target& t) {
    if (t.mem != nullptr) clReleaseMemObject(t.mem);
    if (t.svm != nullptr) {
      clFinish(queue_);
      clSVMFree(ctx_, t.svm);
    }
  }

  // A fresh 1 MiB buffer can be created and migrated: the context survived the case.
  bool usable() {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, std::size_t{1} << 20, nullptr, &err);
    if (m == nullptr) return false;
    cl_event ev = nullptr;
    err = clEnqueueMigrateMemObjects(queue_, 1, &m, 0, 0, nullptr, &ev);
    bool ok = err == CL_SUCCESS && clFinish(queue_) == CL_SUCCESS;
    if (ev != nullptr) {
      cl_int status = CL_COMPLETE;
      ok = ok &&
           clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
               CL_SUCCESS &&
           status == CL_COMPLETE;
      clReleaseEvent(ev);
    }
    clReleaseMemObject(m);
    return ok;
  }

  void build_kernel() {
    const char* source = kernel_source;
    program_ = clCreateProgramWithSource(ctx_, 1, &source, nullptr, &kernel_status_);
    if (program_ == nullptr) return;
    kernel_status_ = clBuildProgram(program_, 1, &device_, nullptr, nullptr, nullptr);
    if (kernel_status_ != CL_SUCCESS) return;
    kernel_ = clCreateKernel(program_, "clpool_first_use_touch", &kernel_status_);
  }

  void cleanup() {
    if (queue_ != nullptr) clFinish(queue_);
    if (kernel_ != nullptr) clReleaseKernel(kernel_);
    if (program_ != nullptr) clReleaseProgram(program_);
    if (partner_ != nullptr) clReleaseMemObject(partner_);
    if (queue_ != nullptr) clReleaseCommandQueue(queue_);
    if (ctx_ != nullptr) clReleaseContext(ctx_);
    kernel_ = nullptr;
    program_ = nullptr;
    partner_ = nullptr;
    queue_ = nullptr;
    ctx_ = nullptr;
  }

  cl_device_id device_;
  first_use_sizes sizes_;
  cl_context ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_mem partner_ = nullptr;
  std::vector<unsigned char> host_;
  bool svm_ = false;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_int kernel_status_ = CL_SUCCESS;
};

const std::size_t origin[3] = {0, 0, 0};
const std::size_t region[3] = {rect_side, rect_side, 1};

cl_int map_and_unmap(matrix_runner& r, const target& t, cl_map_flags flags, cl_event* ev) {
  cl_int err = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(r.queue(), t.mem, CL_TRUE, flags, 0, 4096, 0, nullptr, ev, &err);
  if (p != nullptr) {
    clEnqueueUnmapMemObject(r.queue(), t.mem, p, 0, nullptr, nullptr);
  }
  return p == nullptr && err == CL_SUCCESS ? CL_INVALID_VALUE : err;
}

cl_int kernel_launch(matrix_runner& r, const target& t, cl_event* ev, bool task) {
  const cl_int err = r.set_kernel_arg(t);
  if (err != CL_SUCCESS) return err;
  const std::size_t one = 1;
  return task ? clEnqueueTask(r.queue(), r.kernel(), 0, nullptr, ev)
              : clEnqueueNDRangeKernel(r.queue(), r.kernel(), 1, nullptr, &one, nullptr, 0, nullptr,
                                       ev);
}

// Reads, writes, fills and copies, plain and rect.
std::vector<case_spec> transfer_cases() {
  using r_t = matrix_runner;
  using t_t = const target&;
  return {
      {"write", "clEnqueueWriteBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueWriteBuffer(r.queue(), t.mem, CL_FALSE, 0, 1, r.host(), 0, nullptr, ev);
       }},
      {"write_blocking", "clEnqueueWriteBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueWriteBuffer(r.queue(), t.mem, CL_TRUE, 0, 1, r.host(), 0, nullptr, ev);
       }},
      {"read", "clEnqueueReadBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueReadBuffer(r.queue(), t.mem, CL_TRUE, 0, 1, r.host(), 0, nullptr, ev);
       }},
      {"fill", "clEnqueueFillBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         const cl_uint pattern = 0x5a5a5a5a;
         return clEnqueueFillBuffer(r.queue(), t.mem, &pattern, sizeof pattern, 0, 64, 0, nullptr,
                                    ev);
       }},
      {"copy_from", "clEnqueueCopyBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueCopyBuffer(r.queue(), t.mem, r.partner(), 0, 0, 64, 0, nullptr, ev);
       }},
      {"copy_to", "clEnqueueCopyBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueCopyBuffer(r.queue(), r.partner(), t.mem, 0, 0, 64, 0, nullptr, ev);
       }},
      {"read_rect", "clEnqueueReadBufferRect", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueReadBufferRect(r.queue(), t.mem, CL_TRUE, origin, origin, region,
                                        rect_side, 0, rect_side, 0, r.host(), 0, nullptr, ev);
       }},
      {"write_rect", "clEnqueueWriteBufferRect", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueWriteBufferRect(r.queue(), t.mem, CL_FALSE, origin, origin, region,
                                         rect_side, 0, rect_side, 0, r.host(), 0, nullptr, ev);
       }},
      {"copy_rect_to", "clEnqueueCopyBufferRect", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueCopyBufferRect(r.queue(), r.partner(), t.mem, origin, origin, region,
                                        rect_side, 0, rect_side, 0, 0, nullptr, ev);
       }},
  };
}

// Creation and migrations.
std::vector<case_spec> creation_cases() {
  using r_t = matrix_runner;
  using t_t = const target&;
  return {
      {"create", "clCreateBuffer", false, nullptr},
      {"migrate", "clEnqueueMigrateMemObjects", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueMigrateMemObjects(r.queue(), 1, &t.mem, 0, 0, nullptr, ev);
       }},
      {"migrate_undefined", "clEnqueueMigrateMemObjects", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueMigrateMemObjects(r.queue(), 1, &t.mem,
                                           CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, nullptr, ev);
       }},
      {"migrate_host", "clEnqueueMigrateMemObjects", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueMigrateMemObjects(r.queue(), 1, &t.mem, CL_MIGRATE_MEM_OBJECT_HOST, 0,
                                           nullptr, ev);
       }},
  };
}

// Maps, kernel launches and a sub-buffer's use.
std::vector<case_spec> use_cases() {
  using r_t = matrix_runner;
  using t_t = const target&;
  return {
      {"map", "clEnqueueMapBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return map_and_unmap(r, t, CL_MAP_READ | CL_MAP_WRITE, ev);
       }},
      {"map_invalidate", "clEnqueueMapBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         return map_and_unmap(r, t, CL_MAP_WRITE_INVALIDATE_REGION, ev);
       }},
      {"kernel", "clEnqueueNDRangeKernel", false,
       [](r_t& r, t_t t, cl_event* ev) { return kernel_launch(r, t, ev, false); }},
      {"task", "clEnqueueTask", false,
       [](r_t& r, t_t t, cl_event* ev) { return kernel_launch(r, t, ev, true); }},
      {"sub_buffer_write", "clEnqueueWriteBuffer", false,
       [](r_t& r, t_t t, cl_event* ev) {
         cl_buffer_region sub{0, r.small()};
         cl_int err = CL_SUCCESS;
         cl_mem s =
             clCreateSubBuffer(t.mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &sub, &err);
         if (s == nullptr) return err != CL_SUCCESS ? err : CL_INVALID_MEM_OBJECT;
         err = clEnqueueWriteBuffer(r.queue(), s, CL_FALSE, 0, 1, r.host(), 0, nullptr, ev);
         // The command keeps the sub-buffer alive; the case's own clFinish reports what it did.
         clReleaseMemObject(s);
         return err;
       }},
  };
}

// Creation and the migrations first, then the transfers, then the rest.
std::vector<case_spec> buffer_cases() {
  std::vector<case_spec> cases;
  for (std::vector<case_spec> part : {creation_cases(), transfer_cases(), use_cases()})
    cases.insert(cases.end(), part.begin(), part.end());
  return cases;
}

std::vector<case_spec> svm_cases() {
  using r_t = matrix_runner;
  using t_t = const target&;
  return {
      {"svm_alloc", "clSVMAlloc", true, nullptr},
      {"svm_fill", "clEnqueueSVMMemFill", true,
       [](r_t& r, t_t t, cl_event* ev) {
         const cl_uint pattern = 0x5a5a5a5a;
         return clEnqueueSVMMemFill(r.queue(), t.svm, &pattern, sizeof pattern, 64, 0, nullptr, ev);
       }},
      {"svm_memcpy_to", "clEnqueueSVMMemcpy", true,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueSVMMemcpy(r.queue(), CL_TRUE, t.svm, r.host(), 64, 0, nullptr, ev);
       }},
      {"svm_memcpy_from", "clEnqueueSVMMemcpy", true,
       [](r_t& r, t_t t, cl_event* ev) {
         return clEnqueueSVMMemcpy(r.queue(), CL_TRUE, r.host(), t.svm, 64, 0, nullptr, ev);
       }},
      {"svm_map", "clEnqueueSVMMap", true,
       [](r_t& r, t_t t, cl_event* ev) {
         const cl_int err = clEnqueueSVMMap(r.queue(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, t.svm,
                                            4096, 0, nullptr, ev);
         if (err == CL_SUCCESS) clEnqueueSVMUnmap(r.queue(), t.svm, 0, nullptr, nullptr);
         return err;
       }},
      {"svm_migrate", "clEnqueueSVMMigrateMem", true,
       [](r_t& r, t_t t, cl_event* ev) {
         const void* p = t.svm;
         return clEnqueueSVMMigrateMem(r.queue(), 1, &p, nullptr, 0, 0, nullptr, ev);
       }},
      {"svm_kernel", "clEnqueueNDRangeKernel", true,
       [](r_t& r, t_t t, cl_event* ev) { return kernel_launch(r, t, ev, false); }},
  };
}

std::string status_text(cl_int s) {
  if (s == not_run) return "-";
  if (s == svm_null) return "NULL";
  return std::to_string(s);
}

}  // namespace

std::vector<first_use_case> run_first_use_matrix(cl_device_id device, const first_use_sizes& s) {
  matrix_runner r(device, s);
  std::vector<first_use_case> out;
  for (const case_spec& spec : buffer_cases()) out.push_back(r.run(spec));
  for (const case_spec& spec : svm_cases()) out.push_back(r.run(spec));
  return out;
}

std::string failing_step(const first_use_case& c) {
  if (c.create == not_run) return "none";
  if (c.create != CL_SUCCESS) return "create";
  if (c.enqueue != CL_SUCCESS && c.enqueue != not_run) return "enqueue";
  if (c.event != not_run && c.event < 0) return "event";
  if (c.finish != CL_SUCCESS && c.finish != not_run) return "finish";
  return "none";
}

std::string format_first_use_tsv(const std::vector<first_use_case>& cases) {
  std::ostringstream o;
  o << "case\tcall\tcreate\tenqueue\tfinish\tevent\tfails_at\tcontrol\tusable_after\tnote\n";
  for (const first_use_case& c : cases) {
    o << c.name << '\t' << c.call << '\t' << status_text(c.create) << '\t' << status_text(c.enqueue)
      << '\t' << status_text(c.finish) << '\t' << status_text(c.event) << '\t' << failing_step(c)
      << '\t' << (c.control ? "ok" : "FAILED") << '\t' << (c.usable_after ? "yes" : "NO") << '\t'
      << (c.note.empty() ? "-" : c.note) << '\n';
  }
  return o.str();
}

}  // namespace clpool::probe
