// The measurement run directly on the device model (no OpenCL): for every valid profile it finds
// what the model makes observable, with a bounded number of allocations, and releases everything.
#include "tools/probe/measure.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "device_model/device_memory.h"
#include "tools/probe/profile_gen.h"

namespace clpool::probe {
namespace {

using device_model::device_memory;
using device_model::placement;

constexpr std::uint64_t MiB = 1 << 20;

// A device that follows the model exactly, answering as mockcl would.
class model_port : public device_port {
 public:
  model_port(const device_profile& p, std::uint64_t capacity, std::uint64_t max_alloc)
      : p_(p), mem_(p, capacity), max_alloc_(max_alloc) {}

  attempt allocate(std::uint64_t bytes) override {
    attempt a;
    a.call = "clCreateBuffer";
    if (device_model::exceeds_max_alloc(p_, bytes, max_alloc_)) {
      a.result = attempt::kind::invalid_size;
      a.status = -61;
      return a;
    }
    placement pl;
    if (!mem_.try_commit(bytes, pl)) {
      a.result = attempt::kind::refused;
      a.status = p_.oom_status;
      a.where = p_.oom_at;
      return a;
    }
    held_.push_back({pl, bytes, true});
    a.result = attempt::kind::accepted;
    a.id = held_.size() - 1;
    ++live_;
    return a;
  }
  void release(std::size_t id) override {
    ASSERT_TRUE(held_.at(id).live) << "released twice";
    held_[id].live = false;
    mem_.release(held_[id].where, held_[id].bytes);
    --live_;
  }
  attempt create_untouched(std::uint64_t bytes) override {
    attempt a;
    a.call = "clCreateBuffer";
    if (device_model::exceeds_max_alloc(p_, bytes, max_alloc_)) {
      a.result = attempt::kind::invalid_size;
      a.status = -61;
      return a;
    }
    a.result = attempt::kind::accepted;
    if (p_.oom_at == refusal_point::creation) {
      placement pl;
      if (!mem_.try_commit(bytes, pl)) {
        a.result = attempt::kind::refused;
        a.status = p_.oom_status;
      } else {
        mem_.release(pl, bytes);
      }
    }
    return a;
  }
  // An SVM block is charged like a buffer, refused where the profile's svm_oom_at says.
  std::optional<attempt> svm_once(std::uint64_t bytes) override {
    attempt a;
    placement pl;
    if (!mem_.try_commit(bytes, pl)) {
      a.result = attempt::kind::refused;
      a.status = p_.oom_status;
      a.where = p_.svm_oom_at;
      a.call = p_.svm_oom_at == refusal_point::creation ? "clSVMAlloc returned NULL"
                                                        : "clEnqueueSVMMemFill";
      a.no_status = p_.svm_oom_at == refusal_point::creation;
      return a;
    }
    mem_.release(pl, bytes);
    a.result = attempt::kind::accepted;
    return a;
  }
  std::size_t live() const { return live_; }
  const device_memory& memory() const { return mem_; }

 private:
  struct held {
    placement where;
    std::uint64_t bytes;
    bool live;
  };
  device_profile p_;
  device_memory mem_;
  std::uint64_t max_alloc_;
  std::vector<held> held_;
  std::size_t live_ = 0;
};

// mockcl's default CL_DEVICE_MAX_MEM_ALLOC_SIZE for a capacity (mockcl/config.cc).
std::uint64_t mock_max_alloc(std::uint64_t capacity) {
  return std::max(capacity / 4, std::min<std::uint64_t>(capacity, 128 * MiB));
}

// What the probe writes for a device with profile `p`: commands_finish is never measured, so it
// is written as NVIDIA's driver does it (promptly).
device_profile as_probed(device_profile p) {
  p.commands_finish = device_model::command_completion::promptly;
  return p;
}

measurement probe_model(const device_profile& p, std::uint64_t capacity, probe_limits limits = {},
                        std::uint64_t max_alloc = 0) {
  if (max_alloc == 0) max_alloc = mock_max_alloc(capacity);
  model_port port(p, capacity, max_alloc);
  limits.free_at_start = capacity;
  limits.max_alloc = max_alloc;
  measurement m = measure(port, limits);
  EXPECT_EQ(port.live(), 0u) << "every buffer is released";
  EXPECT_EQ(port.memory().committed(), 0u);
  return m;
}

TEST(Measure, BuiltinProfilesAtAlignedCapacities) {
  for (const char* name : {"exact", "nvidia", "pocl"}) {
    const device_profile p = device_model::load_profile(name);
    const std::uint64_t capacity = 64 * std::max<std::uint64_t>(p.page, 4096) + p.headroom;
    const measurement m = probe_model(p, capacity);
    ASSERT_TRUE(m.complete) << name << ": " << m.incomplete;
    // The probe does not measure when queued commands run (commands_finish), which no probe can
    // see: it writes promptly, says so, and it does not count against everything measured.
    EXPECT_EQ(m.profile(p.name), as_probed(p)) << name << " measured as\n"
                                               << format_profile(m.profile(p.name));
    EXPECT_TRUE(m.unmeasured().empty()) << name;
    EXPECT_TRUE(m.measured_all()) << name;
    EXPECT_LT(m.allocations, 400u) << name;
  }
}

TEST(Measure, UnalignedHeadroomIsSeenToWholePages) {
  // 1 GiB with the nvidia profile: 1021.375 MiB usable, of which 510 pages (1020 MiB) are usable.
  const device_profile p = device_model::load_profile("nvidia");
  const measurement m = probe_model(p, 1024 * MiB);
  ASSERT_TRUE(m.complete) << m.incomplete;
  EXPECT_EQ(m.usable, 1024 * MiB - p.headroom - (1024 * MiB - p.headroom) % p.page);
  EXPECT_EQ(m.profile(p.name), as_probed(observable(p, 1024 * MiB)));
  EXPECT_NE(m.headroom, p.headroom);
}

TEST(Measure, CapacityAboveTheCapIsNotMeasured) {
  const device_profile p = device_model::load_profile("pocl");
  probe_limits limits;
  limits.max_bytes = 64 * MiB;
  const measurement m = probe_model(p, 256 * MiB, limits);
  EXPECT_FALSE(m.complete);
  EXPECT_FALSE(m.refused);
  EXPECT_EQ(m.usable, 64 * MiB) << "it fills up to the cap and no further";
  EXPECT_NE(m.incomplete.find("cannot be measured"), std::string::npos) << m.incomplete;
  EXPECT_TRUE(m.max_alloc_enforced);
}

TEST(Measure, CapThatStopsTheFillShortIsNotTakenForTheLimit) {
  // 900 MiB usable under a 1000 MiB cap: seven 128 MiB buffers (max alloc) fit, an eighth would
  // pass the cap, so the probe cannot tell that the device would have refused it.
  probe_limits limits;
  limits.max_bytes = 1000 * MiB;
  const measurement m = probe_model(device_model::load_profile("exact"), 900 * MiB, limits);
  EXPECT_FALSE(m.complete);
  EXPECT_NE(m.incomplete.find("before the device's limit was certain"), std::string::npos)
      << m.incomplete;
  // A power-of-two cap above the device's memory measures it.
  limits.max_bytes = 1024 * MiB;
  EXPECT_TRUE(probe_model(device_model::load_profile("exact"), 900 * MiB, limits).complete);
}

TEST(Measure, AllocationBoundStopsIt) {
  probe_limits limits;
  limits.max_allocations = 10;
  const measurement m = probe_model(device_model::load_profile("exact"), 64 * MiB + 12345, limits);
  EXPECT_FALSE(m.complete);
  EXPECT_NE(m.incomplete.find("more than 10 allocations"), std::string::npos) << m.incomplete;
}

TEST(Measure, LimitsOfWhatCanBeMeasuredAreSaid) {
  device_profile p = device_model::load_profile("nvidia");
  p.page = 4 * MiB;
  p.pack_limit = 64;
  p.pack_granule = 64;
  // Measuring a 64 B granule in a 4 MiB page would take 65,535 buffers, over a 1,000 limit.
  probe_limits few;
  few.max_allocations = 1000;
  measurement m = probe_model(p, 256 * MiB, few);
  EXPECT_FALSE(m.complete);
  EXPECT_NE(m.incomplete.find("the pack limit is tiny against the page"), std::string::npos)
      << m.incomplete;
  EXPECT_EQ(m.page, 4 * MiB) << "what came before is kept";
  // Buffers of at most one page (max alloc) leave no window to see the page in.
  m = probe_model(p, 256 * MiB, {}, 4 * MiB);
  EXPECT_FALSE(m.complete);
  EXPECT_NE(m.incomplete.find("the page is at least 4194304 bytes"), std::string::npos)
      << m.incomplete;
}

// A page that is not a power of two (the model takes any): the fill's buffers and the page's
// bisection see a power of two below it (64 KiB for 96 KiB), and a profile with that page would
// be about one page in three optimistic. The probe checks the page it found and says it cannot
// describe the device.
TEST(Measure, APageThatIsNotAPowerOfTwoIsNotMeasured) {
  for (const std::uint64_t page : {std::uint64_t{96} << 10, std::uint64_t{3000}, 3 * MiB}) {
    device_profile p = device_model::load_profile("exact");
    p.oom_at = refusal_point::first_use;
    p.page = page;
    const measurement m = probe_model(p, 1024 * MiB, {}, 256 * MiB);
    EXPECT_FALSE(m.complete) << page << ": measured as\n" << format_profile(m.profile("x"));
    EXPECT_NE(m.incomplete.find("the device's page is not a power of two"), std::string::npos)
        << page << ": " << m.incomplete;
    EXPECT_NE(m.incomplete.find("write its profile by hand"), std::string::npos) << m.incomplete;
  }
}

// A device that refuses buffers at creation and SVM blocks at their first use (mockcl's
// semantics=immediate,svm_oom_at=first_use): no profile can say that.
class svm_at_first_use_port : public model_port {
 public:
  using model_port::model_port;
  std::optional<attempt> svm_once(std::uint64_t bytes) override {
    std::optional<attempt> a = model_port::svm_once(bytes);
    if (a && !a->ok()) {
      a->where = refusal_point::first_use;
      a->call = "clEnqueueSVMMemFill";
      a->no_status = false;
    }
    return a;
  }
};

// svm_oom_at seen and not writable was written as creation with everything "measured" (the
// probe's exit 0): it is a key not measured, and the measurement is not all measured.
TEST(Measure, SvmRefusedWhereNoProfileCanSayIsNotMeasured) {
  svm_at_first_use_port port(device_model::load_profile("exact"), 64 * MiB, 16 * MiB);
  probe_limits limits;
  limits.free_at_start = 64 * MiB;
  limits.max_alloc = 16 * MiB;
  const measurement m = measure(port, limits);
  ASSERT_TRUE(m.complete) << m.incomplete;
  EXPECT_FALSE(m.svm_oom_at);
  EXPECT_NE(m.svm_note.find("an SVM block of 1 byte was refused by clEnqueueSVMMemFill -4, which "
                            "a profile cannot say"),
            std::string::npos)
      << m.svm_note;
  EXPECT_EQ(m.unmeasured(), (std::vector<std::string_view>{"svm_oom_at"}));
  EXPECT_FALSE(m.measured_all());
}

TEST(Measure, MaxAllocEnforcement) {
  device_profile p = device_model::load_profile("exact");
  EXPECT_TRUE(probe_model(p, 64 * MiB).max_alloc_enforced);
  EXPECT_EQ(probe_model(p, 64 * MiB).max_alloc_status, -61);
  p.max_alloc_enforced = false;
  // Above the device's usable memory: an out-of-memory, not an invalid size.
  EXPECT_FALSE(probe_model(p, 64 * MiB).max_alloc_enforced);
  EXPECT_EQ(probe_model(p, 64 * MiB).max_alloc_status, -4);
  p.oom_at = refusal_point::first_use;
  EXPECT_EQ(probe_model(p, 64 * MiB).max_alloc_status, 0) << "created, never touched";
}

RC_GTEST_PROP(Measure, FindsWhatTheModelMakesObservable, ()) {
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  const device_profile p = testing::random_profile(rng, /*observable=*/false);
  const std::uint64_t page = p.page == 1 ? 1 : p.page;
  const std::uint64_t extra = std::uniform_int_distribution<std::uint64_t>(0, page - 1)(rng);
  const std::uint64_t capacity = testing::capacity_for(p, rng, extra);
  const measurement m = probe_model(p, capacity);
  RC_ASSERT(m.complete);
  RC_ASSERT(m.profile(p.name) == as_probed(observable(p, capacity)));
  RC_ASSERT(m.allocations < 2000u);
}

RC_GTEST_PROP(Measure, ObservableProfilesAtAlignedCapacitiesComeBackUnchanged, ()) {
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  const device_profile p = testing::random_profile(rng, /*observable=*/true);
  RC_ASSERT(observable(p, testing::capacity_for(p, rng, 0)) == p);
  const measurement m = probe_model(p, testing::capacity_for(p, rng, 0));
  RC_ASSERT(m.complete);
  RC_ASSERT(m.profile(p.name) == as_probed(p));
}

}  // namespace
}  // namespace clpool::probe
