// One battery over every OpenCL allocator, on every device the loader finds (see
// testing/cl_test_devices.h). Each test runs per (device, allocator kind).
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "pool/memory_pool.h"
#include "pool/opencl/buffer_allocators.h"
#include "pool/opencl/cl_error.h"
#include "pool/opencl/host_pinned_allocator.h"
#include "pool/opencl/svm_allocator.h"
#include "pool/opencl/testing/cl_test_devices.h"

namespace clpool::opencl {
namespace {

using testing::device_env;
using testing::test_device;

enum class kind {
  deferred,
  immediate_migrate,
  immediate_write,
  immediate_wait,
  svm,
  svm_queue,
  host_pinned
};
const char* kind_name(kind k) {
  switch (k) {
    case kind::deferred:
      return "deferred";
    case kind::immediate_migrate:
      return "immediate_migrate";
    case kind::immediate_write:
      return "immediate_write";
    case kind::immediate_wait:
      return "immediate_wait";
    case kind::svm:
      return "svm";
    case kind::svm_queue:
      return "svm_queue";
    case kind::host_pinned:
      return "host_pinned";
  }
  return "?";
}

// Per-kind traits: make the allocator, write and read back a block, name its max size.
struct buffer_io {
  static void roundtrip(const device_env& env, const buffer_block& b, std::uint64_t bytes) {
    std::vector<unsigned char> out(bytes), in(bytes, 0);
    for (std::uint64_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
    ASSERT_EQ(clEnqueueWriteBuffer(env.queue(), b.mem, CL_TRUE, 0, bytes, out.data(), 0, nullptr,
                                   nullptr),
              CL_SUCCESS);
    ASSERT_EQ(
        clEnqueueReadBuffer(env.queue(), b.mem, CL_TRUE, 0, bytes, in.data(), 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(in, out);
    // Commands hold references until the runtime's threads retire them: poll for a moment.
    cl_uint refs = 0;
    for (int i = 0; i < 200; ++i) {
      clGetMemObjectInfo(b.mem, CL_MEM_REFERENCE_COUNT, sizeof(refs), &refs, nullptr);
      if (refs == 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(refs, 1u) << "a block must own exactly one reference to its cl_mem";
  }
  static bool same(const buffer_block& a, const buffer_block& b) { return a.mem == b.mem; }
  // The first use of a block of `bytes` (its last byte) on a device that created it: it works or
  // is out-of-memory (a lazy device commits memory here).
  static void first_use(const device_env& env, const buffer_block& b, std::uint64_t bytes) {
    const unsigned char one = 1;
    const cl_int s =
        clEnqueueWriteBuffer(env.queue(), b.mem, CL_TRUE, bytes - 1, 1, &one, 0, nullptr, nullptr);
    EXPECT_TRUE(s == CL_SUCCESS || is_out_of_memory_status(s))
        << "first use of " << bytes << " bytes gave " << status_name(s);
  }
};

struct deferred_traits : buffer_io {
  using allocator = deferred_buffer_allocator;
  static allocator make(const device_env& env) { return allocator(env.context()); }
};
template <force_method M, bool Wait>
struct immediate_traits : buffer_io {
  using allocator = immediate_buffer_allocator;
  static allocator make(const device_env& env) {
    return allocator(env.queue(), {CL_MEM_READ_WRITE, M, Wait});
  }
};
template <bool WithQueue>
struct svm_traits {
  using allocator = svm_allocator;
  static allocator make(const device_env& env) {
    return allocator(env.context(), 0, CL_MEM_READ_WRITE, WithQueue ? env.other_queue() : nullptr);
  }
  static void roundtrip(const device_env& env, const svm_block& b, std::uint64_t bytes) {
    ASSERT_NE(b.ptr, nullptr);
    std::vector<unsigned char> out(bytes), in(bytes, 0);
    for (std::uint64_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(i * 5 + 3);
    ASSERT_EQ(
        clEnqueueSVMMemcpy(env.queue(), CL_TRUE, b.ptr, out.data(), bytes, 0, nullptr, nullptr),
        CL_SUCCESS);
    ASSERT_EQ(
        clEnqueueSVMMemcpy(env.queue(), CL_TRUE, in.data(), b.ptr, bytes, 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(in, out);
  }
  static bool same(const svm_block& a, const svm_block& b) { return a.ptr == b.ptr; }
  static void first_use(const device_env&, const svm_block& b, std::uint64_t bytes) {
    static_cast<unsigned char*>(b.ptr)[bytes - 1] = 1;  // never reached: svm refuses the size
  }
};
struct pinned_traits {
  using allocator = host_pinned_allocator;
  static allocator make(const device_env& env) { return allocator(env.queue()); }
  // The block is mapped pinned host memory: it is the host side of transfers to another buffer,
  // never an argument of a command itself (OpenCL 3.0, 5.5.4).
  static void roundtrip(const device_env& env, const pinned_block& b, std::uint64_t bytes) {
    ASSERT_NE(b.host_ptr, nullptr);
    auto* host = static_cast<unsigned char*>(b.host_ptr);
    std::vector<unsigned char> out(bytes), in(bytes, 0);
    for (std::uint64_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(i * 3 + 2);
    std::memcpy(host, out.data(), bytes);
    cl_int status = CL_SUCCESS;
    mem_ref dev =
        mem_ref::adopt(clCreateBuffer(env.context(), CL_MEM_READ_WRITE, bytes, nullptr, &status));
    ASSERT_EQ(status, CL_SUCCESS);
    ASSERT_EQ(
        clEnqueueWriteBuffer(env.queue(), dev.get(), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
        CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(env.queue(), dev.get(), CL_TRUE, 0, bytes, in.data(), 0, nullptr,
                                  nullptr),
              CL_SUCCESS);
    EXPECT_EQ(in, out) << "pinned memory -> device";
    std::memset(host, 0, bytes);
    ASSERT_EQ(
        clEnqueueReadBuffer(env.queue(), dev.get(), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(std::memcmp(host, out.data(), bytes), 0) << "device -> pinned memory";
  }
  static bool same(const pinned_block& a, const pinned_block& b) { return a.mem == b.mem; }
  static void first_use(const device_env&, const pinned_block& b, std::uint64_t bytes) {
    static_cast<unsigned char*>(b.host_ptr)[bytes - 1] = 1;  // mapped host memory
  }
};

template <class F>
void with_kind(kind k, F&& f) {
  switch (k) {
    case kind::deferred:
      return f(deferred_traits{});
    case kind::immediate_migrate:
      return f(immediate_traits<force_method::migrate, false>{});
    case kind::immediate_write:
      return f(immediate_traits<force_method::write, false>{});
    case kind::immediate_wait:
      return f(immediate_traits<force_method::automatic, true>{});
    case kind::svm:
      return f(svm_traits<false>{});
    case kind::svm_queue:
      return f(svm_traits<true>{});
    case kind::host_pinned:
      return f(pinned_traits{});
  }
}

class allocator_battery : public ::testing::TestWithParam<std::tuple<test_device, kind>>,
                          public device_env {
 protected:
  void SetUp() override {
    const std::string reason = open(std::get<0>(GetParam()));
    if (!reason.empty()) GTEST_SKIP() << reason;
    if (k() == kind::svm || k() == kind::svm_queue) CLPOOL_SKIP_WITHOUT_SVM(*this);
    baseline_refs_ = context_refs();
  }
  kind k() const { return std::get<1>(GetParam()); }
  std::uint64_t max_alloc() const { return device_max_alloc(device()); }
  // svm_allocator refuses a request above max alloc itself, whatever the device does.
  bool checks_max_alloc_itself() const { return k() == kind::svm || k() == kind::svm_queue; }
  // After every allocator and block is gone, the context has its baseline references again.
  void expect_no_context_leak() {
    clFinish(queue());
    clFinish(other_queue());
    // Implementations destroy a released buffer on their own threads once its last command (an
    // unmap, say) is done: give them a moment before calling a difference a leak.
    EXPECT_EQ(context_refs_settled(baseline_refs_), baseline_refs_) << "context references leaked";
  }
  cl_uint baseline_refs_ = 0;
};

TEST_P(allocator_battery, AllocatesUsableBlocksAndFreesThem) {
  with_kind(k(), [&](auto traits) {
    using T = decltype(traits);
    {
      auto a = T::make(*this);
      for (std::uint64_t bytes : {1ull, 100ull, 4096ull, 1ull << 20}) {
        SCOPED_TRACE(bytes);
        auto block = a.allocate(bytes);
        T::roundtrip(*this, block, bytes);
        a.deallocate(block, bytes);
      }
    }
    expect_no_context_leak();
  });
}

// Above CL_DEVICE_MAX_MEM_ALLOC_SIZE. svm_allocator refuses such a request itself; the buffer
// allocators leave it to the device, and devices differ (NVIDIA does not enforce the limit), so
// the test asks the device (testing::probe_max_alloc) which rule to check.
TEST_P(allocator_battery, AboveMaxAllocIsClErrorNotOutOfMemory) {
  const testing::max_alloc_probe probe = testing::probe_max_alloc(*this);
  const bool refused = probe.enforced() || checks_max_alloc_itself();
  with_kind(k(), [&](auto traits) {
    using T = decltype(traits);
    {
      auto a = T::make(*this);
      const std::uint64_t bytes = max_alloc() + 1;
      try {
        auto block = a.allocate(bytes);
        if (refused)
          ADD_FAILURE() << "allocating max_alloc + 1 bytes succeeded; " << probe.description;
        else
          T::first_use(*this, block, bytes);
        a.deallocate(block, bytes);
      } catch (const allocator_out_of_memory& e) {
        if (refused) ADD_FAILURE() << "reported as out-of-memory: " << e.what();
      } catch (const cl_error& e) {
        if (!refused)
          ADD_FAILURE() << probe.description << ", yet the allocator threw " << e.what();
        EXPECT_EQ(e.status(), CL_INVALID_BUFFER_SIZE) << e.what();
        EXPECT_STREQ(e.name(), "CL_INVALID_BUFFER_SIZE");
        EXPECT_FALSE(e.call().empty());
      }
    }
    expect_no_context_leak();
  });
  if (!refused) {
    GTEST_SKIP()
        << "the CL_INVALID_BUFFER_SIZE expectation does not apply: " << probe.description
        << "; checked instead that the request succeeds or is out-of-memory, leaking nothing";
  }
}

TEST_P(allocator_battery, PoolReusesBlocksAndKeepsHeldMemoryOnInvalidSize) {
  const testing::max_alloc_probe probe = testing::probe_max_alloc(*this);
  const bool refused = probe.enforced() || checks_max_alloc_itself();
  with_kind(k(), [&](auto traits) {
    using T = decltype(traits);
    {
      memory_pool<typename T::allocator> pool(T::make(*this));
      typename T::allocator::handle_type first{};
      {
        auto a = pool.allocate(1000);
        first = a.handle();
        T::roundtrip(*this, a.handle(), 1000);
      }
      EXPECT_EQ(pool.held_blocks(), 1u);
      {
        auto b = pool.allocate(1000);  // a hit on the held block
        EXPECT_TRUE(T::same(b.handle(), first));
        EXPECT_EQ(pool.statistics().hits, 1u);
      }
      if (refused) {
        EXPECT_THROW(pool.allocate(max_alloc() + 1), cl_error) << probe.description;
        EXPECT_EQ(pool.held_blocks(), 1u) << "a non-OOM error must not free held memory";
        EXPECT_EQ(pool.statistics().oom_retries, 0u);
        EXPECT_EQ(pool.statistics().allocator_frees, 0u);
      } else {
        // An ordinary request on this device: it succeeds, or is out-of-memory after the pool
        // freed what it held; either way the pool stays consistent.
        try {
          auto big = pool.allocate(max_alloc() + 1);
          EXPECT_GE(big.size(), max_alloc() + 1);
        } catch (const out_of_memory&) {
          EXPECT_EQ(pool.held_blocks(), 0u) << "out-of-memory frees held blocks before failing";
        } catch (const cl_error& e) {
          ADD_FAILURE() << probe.description << ", yet the pool threw " << e.what();
        }
      }
      EXPECT_TRUE(pool.state_is_valid());
      pool.free_held();
      EXPECT_EQ(pool.held_blocks(), 0u);
      if (refused) {
        EXPECT_EQ(pool.statistics().allocator_frees, 1u);
      }
    }
    expect_no_context_leak();
  });
  if (!refused) {
    GTEST_SKIP() << "the keeps-held-memory-on-CL_INVALID_BUFFER_SIZE expectation does not apply: "
                 << probe.description << "; checked the reuse, and that the oversized request "
                 << "succeeds or is out_of_memory with the pool consistent";
  }
}

TEST_P(allocator_battery, AllocationOutlivingThePoolIsFreedOnRelease) {
  with_kind(k(), [&](auto traits) {
    using T = decltype(traits);
    {
      std::optional<typename memory_pool<typename T::allocator>::allocation> keep;
      {
        memory_pool<typename T::allocator> pool(T::make(*this));
        keep = pool.allocate(4096);
        auto held = pool.allocate(4096);
      }
      T::roundtrip(*this, keep->handle(), 4096);
      keep.reset();
    }
    expect_no_context_leak();
  });
}

TEST_P(allocator_battery, ManyBlocksAllDistinct) {
  with_kind(k(), [&](auto traits) {
    using T = decltype(traits);
    {
      memory_pool<typename T::allocator> pool(T::make(*this));
      std::vector<typename memory_pool<typename T::allocator>::allocation> live;
      for (int i = 0; i < 32; ++i) live.push_back(pool.allocate(256 + 64 * i));
      for (std::size_t i = 0; i < live.size(); ++i) {
        for (std::size_t j = i + 1; j < live.size(); ++j) {
          EXPECT_FALSE(T::same(live[i].handle(), live[j].handle()));
        }
      }
      EXPECT_EQ(pool.active_blocks(), 32u);
      live.clear();
      EXPECT_EQ(pool.active_blocks(), 0u);
    }
    expect_no_context_leak();
  });
}

std::string battery_name(const ::testing::TestParamInfo<std::tuple<test_device, kind>>& info) {
  ::testing::TestParamInfo<test_device> d(std::get<0>(info.param), info.index);
  return testing::test_device_name(d) + "_" + kind_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    AllDevices, allocator_battery,
    ::testing::Combine(::testing::ValuesIn(testing::test_devices()),
                       ::testing::Values(kind::deferred, kind::immediate_migrate,
                                         kind::immediate_write, kind::immediate_wait, kind::svm,
                                         kind::svm_queue, kind::host_pinned)),
    battery_name);

}  // namespace
}  // namespace clpool::opencl
