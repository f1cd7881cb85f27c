// svm_pool and svm_allocator on every device with SVM: PyOpenCL's PooledSVM queue semantics, and
// reuse across queues ordered on the device without blocking the host.
#include "pool/opencl/svm_pool.h"

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "pool/opencl/cl_error.h"
#include "pool/opencl/testing/cl_test_devices.h"

namespace clpool::opencl {
namespace {

using testing::completes_within;
using testing::event_status;
using testing::make_gate;
using testing::open_gate;

constexpr std::size_t kBytes = 1 << 16;

class svm_pool_test : public testing::device_test {
 protected:
  void SetUp() override {
    testing::device_test::SetUp();
    if (IsSkipped()) return;
    CLPOOL_SKIP_WITHOUT_SVM(*this);
    src_.resize(kBytes);
    std::iota(src_.begin(), src_.end(), 1);
    refs_before_ = references();
  }
  void TearDown() override {
    if (device() == nullptr || IsSkipped()) return;
    // Every queue reference and event the pool took is gone.
    expect_references_settle_to(refs_before_);
  }
  svm_allocator make_allocator(cl_command_queue free_queue = nullptr) {
    return svm_allocator(context(), 0, CL_MEM_READ_WRITE, free_queue);
  }
  // Enqueues on `q` a write of src_ into `p` that waits for `gate`; returns its event.
  event_ref gated_write(cl_command_queue q, void* p, cl_event gate) {
    cl_event e = nullptr;
    EXPECT_EQ(clEnqueueSVMMemcpy(q, CL_FALSE, p, src_.data(), kBytes, 1, &gate, &e), CL_SUCCESS);
    clFlush(q);
    return event_ref::adopt(e);
  }
  std::vector<unsigned char> src_;
  reference_counts refs_before_;
};

TEST_P(svm_pool_test, AllocatesBoundAndUnboundBlocks) {
  svm_pool pool(make_allocator());
  pooled_svm a = pool.allocate(kBytes, queue());
  ASSERT_TRUE(a.has_block());
  EXPECT_NE(a.ptr(), nullptr);
  EXPECT_EQ(a.size(), kBytes);
  EXPECT_EQ(a.span().size, kBytes);
  EXPECT_EQ(a.queue(), queue());
  pooled_svm b = pool.allocate(100);
  EXPECT_EQ(b.queue(), nullptr);
  pooled_svm z = pool.allocate(0);
  EXPECT_FALSE(z.has_block());
  EXPECT_EQ(z.ptr(), nullptr);
  EXPECT_EQ(pool.active_blocks(), 2u);
}

// A block of the largest size the devices allow is made at that size, not rounded above it (which
// svm_allocator refuses as CL_INVALID_BUFFER_SIZE), and not kept.
TEST_P(svm_pool_test, ARequestOfMaxAllocIsServedAtItsOwnSize) {
  svm_pool pool(make_allocator());
  const std::uint64_t max_alloc = pool.pool().allocator().max_alloc_bytes();
  ASSERT_EQ(pool.pool().allocator().largest_block(), max_alloc);
  const bool unpooled = rounded_size(max_alloc, pool.pool().leading_bits()) > max_alloc;
  pooled_svm a = pool.allocate(max_alloc);
  ASSERT_TRUE(a.has_block());
  EXPECT_EQ(a.rounded_size(),
            unpooled ? max_alloc : rounded_size(max_alloc, pool.pool().leading_bits()));
  a.release();
  EXPECT_EQ(pool.held_blocks(), unpooled ? 0u : 1u) << "max alloc " << max_alloc;
}

TEST_P(svm_pool_test, SameQueueReuseIsAHitAndKeepsTheBinding) {
  svm_pool pool(make_allocator());
  void* first = nullptr;
  {
    pooled_svm a = pool.allocate(kBytes, queue());
    first = a.ptr();
    ASSERT_EQ(
        clEnqueueSVMMemcpy(queue(), CL_FALSE, a.ptr(), src_.data(), kBytes, 0, nullptr, nullptr),
        CL_SUCCESS);
  }
  pooled_svm b = pool.allocate(kBytes, queue());
  EXPECT_EQ(b.ptr(), first);
  EXPECT_EQ(b.queue(), queue());
  EXPECT_EQ(pool.pool().statistics().hits, 1u);
  std::vector<unsigned char> out(kBytes);
  ASSERT_EQ(clEnqueueSVMMemcpy(queue(), CL_TRUE, out.data(), b.ptr(), kBytes, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out, src_);
}

TEST_P(svm_pool_test, ReuseOnAnotherQueueWaitsOnTheDeviceNotTheHost) {
  svm_pool pool(make_allocator());
  event_ref gate = make_gate(context());
  event_ref written;
  {
    pooled_svm a = pool.allocate(kBytes, queue());
    written = gated_write(queue(), a.ptr(), gate.get());
  }  // released while its write on queue() is still held back by the gate
  const auto start = std::chrono::steady_clock::now();
  pooled_svm b = pool.allocate(kBytes, other_queue());  // must not block the host
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(b.queue(), other_queue());
  std::vector<unsigned char> out(kBytes, 0);
  cl_event read = nullptr;
  ASSERT_EQ(
      clEnqueueSVMMemcpy(other_queue(), CL_FALSE, out.data(), b.ptr(), kBytes, 0, nullptr, &read),
      CL_SUCCESS);
  event_ref read_ref = event_ref::adopt(read);
  clFlush(other_queue());
  EXPECT_FALSE(completes_within(read, 100)) << "the new user ran before the old user's write";
  EXPECT_NE(event_status(written.get()), CL_COMPLETE);
  open_gate(gate.get());
  ASSERT_EQ(clWaitForEvents(1, &read), CL_SUCCESS);
  EXPECT_EQ(event_status(written.get()), CL_COMPLETE);
  EXPECT_EQ(out, src_) << "the new user saw the block before the old user's write landed";
}

TEST_P(svm_pool_test, UnboundReuseMakesTheHostWaitForThePreviousQueue) {
  svm_pool pool(make_allocator());
  event_ref gate = make_gate(context());
  event_ref written;
  {
    pooled_svm a = pool.allocate(kBytes, queue());
    written = gated_write(queue(), a.ptr(), gate.get());
  }
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    open_gate(gate.get());
  });
  pooled_svm b = pool.allocate(kBytes);  // host use: waits for queue()
  EXPECT_EQ(event_status(written.get()), CL_COMPLETE);
  EXPECT_EQ(b.queue(), nullptr);
  opener.join();
}

TEST_P(svm_pool_test, BindToQueueMovesTheBlockAcrossQueuesInOrder) {
  svm_pool pool(make_allocator());
  event_ref gate = make_gate(context());
  pooled_svm a = pool.allocate(kBytes, queue());
  event_ref written = gated_write(queue(), a.ptr(), gate.get());
  a.bind_to_queue(other_queue());
  EXPECT_EQ(a.queue(), other_queue());
  std::vector<unsigned char> out(kBytes, 0);
  cl_event read = nullptr;
  ASSERT_EQ(
      clEnqueueSVMMemcpy(other_queue(), CL_FALSE, out.data(), a.ptr(), kBytes, 0, nullptr, &read),
      CL_SUCCESS);
  event_ref read_ref = event_ref::adopt(read);
  clFlush(other_queue());
  EXPECT_FALSE(completes_within(read, 100));
  open_gate(gate.get());
  ASSERT_EQ(clWaitForEvents(1, &read), CL_SUCCESS);
  EXPECT_EQ(out, src_);
}

TEST_P(svm_pool_test, EnqueueReleaseOrdersTheNextUserAfterThatQueue) {
  svm_pool pool(make_allocator());
  event_ref gate = make_gate(context());
  event_ref written;
  {
    pooled_svm a = pool.allocate(kBytes);
    written = gated_write(queue(), a.ptr(), gate.get());
    a.enqueue_release(queue());
    EXPECT_FALSE(a.has_block());
    a.enqueue_release(queue());  // a second release does nothing
  }
  pooled_svm b = pool.allocate(kBytes, other_queue());
  cl_event marker = nullptr;
  ASSERT_EQ(clEnqueueMarkerWithWaitList(other_queue(), 0, nullptr, &marker), CL_SUCCESS);
  event_ref marker_ref = event_ref::adopt(marker);
  clFlush(other_queue());
  EXPECT_FALSE(completes_within(marker, 100));
  open_gate(gate.get());
  EXPECT_EQ(clWaitForEvents(1, &marker), CL_SUCCESS);
}

TEST_P(svm_pool_test, UnbindFromQueueWaitsForTheQueue) {
  svm_pool pool(make_allocator());
  pooled_svm a = pool.allocate(kBytes, queue());
  cl_event e = nullptr;
  ASSERT_EQ(clEnqueueSVMMemcpy(queue(), CL_FALSE, a.ptr(), src_.data(), kBytes, 0, nullptr, &e),
            CL_SUCCESS);
  event_ref ref = event_ref::adopt(e);
  a.unbind_from_queue();
  EXPECT_EQ(event_status(e), CL_COMPLETE);
  EXPECT_EQ(a.queue(), nullptr);
  a.unbind_from_queue();  // unbound: nothing to do
}

TEST_P(svm_pool_test, OutOfOrderQueuesAreRejectedWithAClearError) {
  if (out_of_order_queue() == nullptr) GTEST_SKIP() << "device cannot make out-of-order queues";
  svm_pool pool(make_allocator());
  try {
    pool.allocate(kBytes, out_of_order_queue());
    FAIL() << "allocate accepted an out-of-order queue";
  } catch (const invalid_use& e) {
    EXPECT_NE(std::string(e.what()).find("out-of-order"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_EQ(pool.managed_bytes(), 0u);
  pooled_svm a = pool.allocate(kBytes, queue());
  EXPECT_THROW(a.bind_to_queue(out_of_order_queue()), invalid_use);
  EXPECT_EQ(a.queue(), queue()) << "a rejected bind must leave the binding as it was";
  EXPECT_THROW(a.enqueue_release(out_of_order_queue()), invalid_use);
  EXPECT_TRUE(a.has_block());
  EXPECT_THROW(svm_allocator(context(), 0, CL_MEM_READ_WRITE, out_of_order_queue()), invalid_use);
}

TEST_P(svm_pool_test, MisuseGivesTypedErrors) {
  svm_pool pool(make_allocator());
  pooled_svm a = pool.allocate(kBytes);
  EXPECT_THROW(a.bind_to_queue(nullptr), invalid_use);
  a.release();
  a.release();
  EXPECT_THROW(a.bind_to_queue(queue()), invalid_use);
  EXPECT_THROW(a.unbind_from_queue(), invalid_use);
  pooled_svm empty;
  EXPECT_EQ(empty.ptr(), nullptr);
  EXPECT_THROW(empty.bind_to_queue(queue()), invalid_use);

  EXPECT_THROW(svm_allocator(nullptr), invalid_use);
  EXPECT_THROW(svm_allocator(context(), 3), invalid_use);
  EXPECT_THROW(svm_allocator(context(), 48), invalid_use);
  EXPECT_NO_THROW(svm_allocator(context(), 64));

  // A queue of another context.
  cl_int status = CL_SUCCESS;
  cl_device_id d = device();
  context_ref other_ctx =
      context_ref::adopt(clCreateContext(nullptr, 1, &d, nullptr, nullptr, &status));
  ASSERT_EQ(status, CL_SUCCESS);
  cl_command_queue foreign =
      clCreateCommandQueueWithProperties(other_ctx.get(), d, nullptr, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  queue_ref foreign_ref = queue_ref::adopt(foreign);
  EXPECT_THROW(svm_allocator(context(), 0, CL_MEM_READ_WRITE, foreign), invalid_use);
  EXPECT_THROW(pool.allocate(16, foreign), invalid_use);
}

TEST_P(svm_pool_test, FineGrainFlagsFollowTheDeviceCapabilities) {
  const cl_device_svm_capabilities caps = device_svm_capabilities(device());
  const cl_svm_mem_flags fine = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER;
  if ((caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0) {
    svm_pool pool(svm_allocator(context(), 0, fine));
    pooled_svm a = pool.allocate(256);
    static_cast<unsigned char*>(a.ptr())[0] = 42;  // fine grain: the host may touch it directly
    EXPECT_EQ(static_cast<unsigned char*>(a.ptr())[0], 42);
  } else {
    EXPECT_THROW(svm_allocator(context(), 0, fine), unsupported_feature);
  }
}

TEST_P(svm_pool_test, FreeOnTheAllocatorQueueWaitsForTheBlocksLastQueue) {
  svm_pool pool(make_allocator(other_queue()));  // frees go through clEnqueueSVMFree on other
  event_ref gate = make_gate(context());
  event_ref written;
  {
    pooled_svm a = pool.allocate(kBytes, queue());
    written = gated_write(queue(), a.ptr(), gate.get());
  }
  pool.free_held();  // enqueues the free on other_queue(), after a marker on queue()
  cl_event after = nullptr;
  ASSERT_EQ(clEnqueueMarkerWithWaitList(other_queue(), 0, nullptr, &after), CL_SUCCESS);
  event_ref after_ref = event_ref::adopt(after);
  clFlush(other_queue());
  EXPECT_FALSE(completes_within(after, 100)) << "the free did not wait for the block's last use";
  open_gate(gate.get());
  EXPECT_EQ(clWaitForEvents(1, &after), CL_SUCCESS);
  EXPECT_EQ(event_status(written.get()), CL_COMPLETE);
}

TEST_P(svm_pool_test, PoolDestroyedWithBoundLiveBlocks) {
  pooled_svm keep;
  {
    svm_pool pool(make_allocator(queue()));
    keep = pool.allocate(kBytes, other_queue());
    pooled_svm held = pool.allocate(kBytes, queue());
  }
  ASSERT_EQ(clEnqueueSVMMemcpy(other_queue(), CL_TRUE, keep.ptr(), src_.data(), kBytes, 0, nullptr,
                               nullptr),
            CL_SUCCESS);
  keep.release();
}

TEST_P(svm_pool_test, AboveMaxAllocDoesNotFreeHeldBlocks) {
  svm_pool pool(make_allocator());
  { pooled_svm a = pool.allocate(kBytes); }
  ASSERT_EQ(pool.held_blocks(), 1u);
  try {
    pool.allocate(pool.pool().allocator().max_alloc_bytes() + 1);
    FAIL() << "no error";
  } catch (const cl_error& e) {
    EXPECT_EQ(e.status(), CL_INVALID_BUFFER_SIZE) << e.what();
    EXPECT_EQ(e.call(), "clSVMAlloc");
  }
  EXPECT_EQ(pool.held_blocks(), 1u);
}

TEST_P(svm_pool_test, ThreadsShareOnePoolEachOnItsOwnQueue) {
  svm_pool pool(make_allocator());
  constexpr int kThreads = 4;
  constexpr int kIterations = 100;
  std::vector<queue_ref> queues;
  for (int t = 0; t < kThreads; ++t) queues.push_back(make_queue());
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cl_command_queue q = queues[t].get();
      std::vector<unsigned char> out(4096);
      for (int i = 0; i < kIterations; ++i) {
        pooled_svm p = pool.allocate(4096, q);  // may come from another thread's queue
        const unsigned char pattern = static_cast<unsigned char>(t * 31 + i);
        if (clEnqueueSVMMemFill(q, p.ptr(), &pattern, 1, 4096, 0, nullptr, nullptr) != CL_SUCCESS ||
            clEnqueueSVMMemcpy(q, CL_TRUE, out.data(), p.ptr(), 4096, 0, nullptr, nullptr) !=
                CL_SUCCESS ||
            out[0] != pattern || out[4095] != pattern) {
          ++failures[t];
        }
        if (i % 3 == 0) p.enqueue_release(q);
      }
      clFinish(q);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_TRUE(pool.pool().state_is_valid());
  EXPECT_GT(pool.pool().statistics().hits, 0u);
}

CLPOOL_INSTANTIATE_DEVICE_TESTS(svm_pool_test);

}  // namespace
}  // namespace clpool::opencl
