// The OpenCL object graph (objects.h): every object keeps what it was created from valid until it
// goes, as the specification says and real drivers do, and the leak counts stay exact. One test
// per edge, in-process and through the system loader (battery_fixture.h).
#include <gtest/gtest.h>

#include "mockcl/battery_fixture.h"

namespace {

using namespace mockcl_battery;  // NOLINT: the fixture's names

template <typename T>
class ObjectGraph : public Battery<T> {
 protected:
  cl_uint ContextRefs(cl_context c) {
    cl_uint n = 0;
    EXPECT_EQ(this->d_->clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, nullptr),
              CL_SUCCESS);
    return n;
  }
  // Nothing is left alive and nothing was misused.
  void ExpectAllGone() {
    mockcl::accounting_snapshot s = this->ctl_->snapshot();
    for (const char* t : {"context", "queue", "mem", "event", "program", "kernel", "svm"})
      EXPECT_EQ(s.live[t], 0u) << t;
    EXPECT_EQ(s.reports.use_after_release, 0u);
    EXPECT_EQ(s.reports.double_release, 0u);
    EXPECT_EQ(s.reports.leaked_at_context_release, 0u);
    EXPECT_EQ(s.devices.at(0).outstanding, 0u);
  }
};
TYPED_TEST_SUITE(ObjectGraph, Backends, BackendNames);

// python/README.md's `cl.CommandQueue(cl.create_some_context())`: the application's context goes
// at once, and the queue's context is used for everything after.
TYPED_TEST(ObjectGraph, QueueKeepsItsContext) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  ASSERT_EQ(d->clReleaseContext(this->ctx_), CL_SUCCESS);
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetCommandQueueInfo(this->q_, CL_QUEUE_CONTEXT, sizeof c, &c, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(c, this->ctx_);
  EXPECT_EQ(this->ContextRefs(c), 1u);  // the queue's
  ASSERT_EQ(d->clRetainContext(c), CL_SUCCESS);
  EXPECT_EQ(this->ContextRefs(c), 2u);
  cl_int err;
  cl_mem m = d->clCreateBuffer(c, CL_MEM_READ_WRITE, 4096, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clEnqueueMigrateMemObjects(this->q_, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                          0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseContext(c), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live["context"], 1u);  // still the queue's
  EXPECT_EQ(d->clReleaseCommandQueue(this->q_), CL_SUCCESS);
  this->q_ = nullptr;
  this->ctx_ = nullptr;
  this->ExpectAllGone();
  // Now it is gone: the handle is stale.
  EXPECT_EQ(d->clRetainContext(c), CL_INVALID_CONTEXT);
}

TYPED_TEST(ObjectGraph, BufferKeepsItsContext) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem m = this->Buf(4096);
  ASSERT_EQ(d->clReleaseCommandQueue(this->q_), CL_SUCCESS);
  ASSERT_EQ(d->clReleaseContext(this->ctx_), CL_SUCCESS);
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, nullptr), CL_SUCCESS);
  EXPECT_EQ(this->ContextRefs(c), 1u);
  cl_int err;
  cl_mem other = d->clCreateBuffer(c, CL_MEM_READ_WRITE, 64, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(this->ContextRefs(c), 2u);
  EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live["context"], 1u);
  EXPECT_EQ(d->clReleaseMemObject(other), CL_SUCCESS);
  this->q_ = nullptr;
  this->ctx_ = nullptr;
  this->ExpectAllGone();
}

TYPED_TEST(ObjectGraph, SubBufferKeepsItsBuffer) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem parent = this->Buf(4096);
  cl_buffer_region r{1024, 1024};
  cl_int err;
  cl_mem sub =
      d->clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clReleaseMemObject(parent), CL_SUCCESS);
  cl_mem assoc = nullptr;
  ASSERT_EQ(d->clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(assoc, parent);
  size_t size = 0;
  EXPECT_EQ(d->clGetMemObjectInfo(assoc, CL_MEM_SIZE, sizeof size, &size, nullptr), CL_SUCCESS);
  EXPECT_EQ(size, 4096u);
  cl_uint refs = 0;
  EXPECT_EQ(d->clGetMemObjectInfo(assoc, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(refs, 1u);
  int x = 7;
  EXPECT_EQ(d->clEnqueueWriteBuffer(this->q_, assoc, CL_TRUE, 0, sizeof x, &x, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 4096u);  // the parent's bytes are still charged
  EXPECT_EQ(d->clReleaseMemObject(sub), CL_SUCCESS);
  EXPECT_EQ(this->Outstanding(), 0u);  // and go with the sub-buffer
  EXPECT_EQ(d->clGetMemObjectInfo(assoc, CL_MEM_SIZE, sizeof size, &size, nullptr),
            CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(this->ctl_->snapshot().reports.use_after_release, 1u);
  this->Teardown();
}

TYPED_TEST(ObjectGraph, ProgramKeepsItsContext) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  const char* src = "__kernel void k(__global int* a) { }";
  cl_int err;
  cl_program p = d->clCreateProgramWithSource(this->ctx_, 1, &src, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(d->clReleaseCommandQueue(this->q_), CL_SUCCESS);
  ASSERT_EQ(d->clReleaseContext(this->ctx_), CL_SUCCESS);
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof c, &c, nullptr), CL_SUCCESS);
  EXPECT_EQ(this->ContextRefs(c), 1u);
  EXPECT_EQ(d->clBuildProgram(p, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseProgram(p), CL_SUCCESS);
  this->q_ = nullptr;
  this->ctx_ = nullptr;
  this->ExpectAllGone();
}

TYPED_TEST(ObjectGraph, KernelKeepsItsProgram) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_program p;
  cl_kernel k = this->Kernel(&p);
  ASSERT_EQ(d->clReleaseProgram(p), CL_SUCCESS);
  cl_program kp = nullptr;
  ASSERT_EQ(d->clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof kp, &kp, nullptr), CL_SUCCESS);
  ASSERT_EQ(kp, p);
  ASSERT_EQ(d->clRetainProgram(kp), CL_SUCCESS);
  cl_uint refs = 0;
  EXPECT_EQ(d->clGetProgramInfo(kp, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(refs, 2u);
  cl_int err;
  cl_kernel k2 = d->clCreateKernel(kp, "touch", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clReleaseProgram(kp), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseKernel(k), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live["program"], 1u);  // k2's
  EXPECT_EQ(d->clReleaseKernel(k2), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live["program"], 0u);
  this->Teardown();
  this->ExpectAllGone();
}

TYPED_TEST(ObjectGraph, EventKeepsItsQueueAndContext) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_event e = nullptr;
  ASSERT_EQ(d->clEnqueueMarkerWithWaitList(this->q_, 0, nullptr, &e), CL_SUCCESS);
  ASSERT_EQ(d->clFinish(this->q_), CL_SUCCESS);
  this->Teardown();  // the application's queue and context
  cl_command_queue q = nullptr;
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clGetEventInfo(e, CL_EVENT_CONTEXT, sizeof c, &c, nullptr), CL_SUCCESS);
  ASSERT_EQ(d->clRetainCommandQueue(q), CL_SUCCESS);
  EXPECT_EQ(d->clEnqueueBarrierWithWaitList(q, 1, &e, nullptr), CL_SUCCESS);
  EXPECT_EQ(d->clFinish(q), CL_SUCCESS);
  EXPECT_EQ(this->ContextRefs(c), 2u);  // the queue's and the event's
  EXPECT_EQ(d->clReleaseCommandQueue(q), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live["queue"], 1u);
  EXPECT_EQ(d->clReleaseEvent(e), CL_SUCCESS);
  this->ExpectAllGone();
}

TYPED_TEST(ObjectGraph, UserEventKeepsItsContext) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_int err;
  cl_event u = d->clCreateUserEvent(this->ctx_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  this->Teardown();
  cl_context c = nullptr;
  ASSERT_EQ(d->clGetEventInfo(u, CL_EVENT_CONTEXT, sizeof c, &c, nullptr), CL_SUCCESS);
  EXPECT_EQ(this->ContextRefs(c), 1u);
  EXPECT_EQ(d->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseEvent(u), CL_SUCCESS);
  this->ExpectAllGone();
}

// A hold is not the application's: releasing past its own references is a double release, and
// the object stays valid for its holder.
TYPED_TEST(ObjectGraph, ReleasingAHeldObjectTwiceIsADoubleRelease) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  ASSERT_EQ(d->clReleaseContext(this->ctx_), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseContext(this->ctx_), CL_INVALID_CONTEXT);
  EXPECT_EQ(this->ctl_->snapshot().reports.double_release, 1u);
  EXPECT_EQ(this->ContextRefs(this->ctx_), 1u);
  cl_int err;
  cl_mem m = d->clCreateBuffer(this->ctx_, CL_MEM_READ_WRITE, 64, nullptr, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(d->clReleaseMemObject(m), CL_SUCCESS);
  EXPECT_EQ(d->clReleaseCommandQueue(this->q_), CL_SUCCESS);
  EXPECT_EQ(this->ctl_->snapshot().live["context"], 0u);
  this->q_ = nullptr;
  this->ctx_ = nullptr;
}

// The leak counts: what the application leaked keeps what it holds alive (and both are counted
// at exit); a context's leaks are what nothing holds it by (SVM blocks, which are no objects).
TYPED_TEST(ObjectGraph, LeakCountsStayExact) {
  this->Setup("gpu-64m");
  auto* d = this->d_;
  cl_mem leaked = this->Buf(64);
  void* svm = d->clSVMAlloc(this->ctx_, CL_MEM_READ_WRITE, 256, 0);
  ASSERT_NE(svm, nullptr);
  this->Teardown();
  mockcl::accounting_snapshot s = this->ctl_->snapshot();
  EXPECT_EQ(s.live["context"], 1u);  // the leaked buffer's
  EXPECT_EQ(s.live["queue"], 0u);
  EXPECT_EQ(s.live["mem"], 1u);
  EXPECT_EQ(s.reports.leaked_at_context_release, 0u);
  EXPECT_EQ(d->clReleaseMemObject(leaked), CL_SUCCESS);
  s = this->ctl_->snapshot();
  EXPECT_EQ(s.live["mem"], 0u);
  EXPECT_EQ(s.reports.leaked_at_context_release, 1u);  // the SVM block
  EXPECT_EQ(s.live["svm"], 1u);
}

}  // namespace
