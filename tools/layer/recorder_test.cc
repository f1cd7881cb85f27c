#include "tools/layer/recorder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

namespace clpool::layer {
namespace {

using trace::trace_action;
using trace::trace_event;
using trace::trace_kind;

// Collects events; the vector is owned by the test so it outlives the recorder's sink.
class vector_sink final : public event_sink {
 public:
  explicit vector_sink(std::vector<trace_event>* out, int fail_after = -1)
      : out_(out), fail_after_(fail_after) {}
  bool write(const trace_event& e) override {
    if (fail_after_ >= 0 && static_cast<int>(out_->size()) >= fail_after_) return false;
    out_->push_back(e);
    return true;
  }
  bool comment(std::string_view key, std::string_view value) override {
    comments.push_back(std::string(key) + ": " + std::string(value));
    return true;
  }
  std::string error() const override { return "No space left on device"; }
  std::vector<std::string> comments;

 private:
  std::vector<trace_event>* out_;
  int fail_after_;
};

layer_settings with_budget(std::uint64_t bytes) {
  layer_settings s;
  s.budget_bytes = bytes;
  return s;
}

// The program's release (FORMAT.md "Two moments of a free"): counted references, no `release`
// when the driver frees during the call, `wait` only while a released block awaits its free, a
// refused release keeps the reference, and an SVM release at clEnqueueSVMFree.
TEST(Recorder, TheProgramsReleaseAndWait) {
  std::vector<trace_event> events;
  recorder r(layer_settings{}, std::make_unique<vector_sink>(&events));
  int handle_a = 0, handle_b = 0, svm = 0;
  recorder::ticket a = r.begin_alloc(4096, trace_kind::buffer, 1);
  r.commit_alloc(a.block);
  r.hold_mem(&handle_a, a.block);
  r.note_wait(nullptr);  // nothing released: no event
  r.retain_mem(&handle_a);
  EXPECT_EQ(r.begin_release(&handle_a), 0u);  // the program still holds one reference
  const std::uint64_t id = r.begin_release(&handle_a);
  EXPECT_EQ(id, a.block.id);
  r.end_release(&handle_a, id, /*released=*/true);  // the driver did not free it in the call
  r.note_wait(&events);                             // a awaits its free: a wait on queue 1
  r.free_block(a.block, 0, &handle_a);
  r.note_wait(nullptr);  // nothing awaits: no event
  // b: the driver frees it during the program's call (one moment), then a refused release.
  recorder::ticket b = r.begin_alloc(8, trace_kind::buffer, 0);
  r.commit_alloc(b.block);
  r.hold_mem(&handle_b, b.block);
  const std::uint64_t id_b = r.begin_release(&handle_b);
  r.free_block(b.block, 0, &handle_b);
  r.end_release(&handle_b, id_b, true);
  recorder::ticket c = r.begin_alloc(16, trace_kind::buffer, 0);
  r.commit_alloc(c.block);
  r.hold_mem(&handle_b, c.block);  // a new buffer at b's address
  r.end_release(&handle_b, r.begin_release(&handle_b), /*released=*/false);
  EXPECT_EQ(r.begin_release(&handle_b), c.block.id) << "a refused release keeps the reference";
  // An SVM block released by clEnqueueSVMFree, freed when the command runs.
  recorder::ticket s = r.begin_alloc(64, trace_kind::svm, 0);
  r.remember_svm(&svm, s.block);
  r.commit_alloc(s.block);
  r.release_svm(&svm, 2);
  r.free_block(*r.forget_svm(&svm), 2);
  std::vector<std::string> got;
  for (const trace_event& e : events) {
    got.push_back(std::string(to_string(e.action)) + " " + std::to_string(e.id) + " q" +
                  std::to_string(e.queue));
  }
  const std::string A = std::to_string(a.block.id), B = std::to_string(b.block.id),
                    C = std::to_string(c.block.id), S = std::to_string(s.block.id);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "alloc " + A + " q0", "release " + A + " q0", "wait 0 q1", "free " + A + " q0",
                     "alloc " + B + " q0", "free " + B + " q0", "alloc " + C + " q0",
                     "alloc " + S + " q0", "release " + S + " q2", "free " + S + " q2"}));
}

// A buffer the program released while it still held a sub-buffer of it stays reachable: its
// `release` is recorded after the last sub-buffer's (its release, or its free when the driver
// destroyed it during the program's call), so no replay frees it while the sub-buffer lives.
TEST(Recorder, AParentsReleaseWaitsForItsSubBuffers) {
  std::vector<trace_event> events;
  recorder r(layer_settings{}, std::make_unique<vector_sink>(&events));
  int parent = 0, sub_a = 0, sub_b = 0, lone = 0;
  const auto make = [&](int* handle, std::uint64_t size, trace_kind kind) {
    recorder::ticket t = r.begin_alloc(size, kind, 0);
    r.commit_alloc(t.block);
    r.hold_mem(handle, t.block);
    return t.block;
  };
  const auto release = [&](int* handle) {
    const std::uint64_t id = r.begin_release(handle);
    r.end_release(handle, id, /*released=*/true);
  };
  const block_info p = make(&parent, 1 << 20, trace_kind::buffer);
  const block_info a = make(&sub_a, 4096, trace_kind::sub);
  r.hold_sub_buffer(&sub_a, &parent);
  const block_info b = make(&sub_b, 4096, trace_kind::sub);
  r.hold_sub_buffer(&sub_b, &parent);
  release(&parent);  // a and b still reach it: nothing yet
  release(&sub_a);
  // b: the driver destroys it during the program's call, then the parent.
  const std::uint64_t id_b = r.begin_release(&sub_b);
  r.free_block(b, 0, &sub_b);
  r.end_release(&sub_b, id_b, true);
  r.free_block(a, 0, nullptr);
  r.free_block(p, 0, nullptr);
  // A buffer with no sub-buffer, and a sub-buffer of an unknown parent: as before.
  const block_info l = make(&lone, 64, trace_kind::buffer);
  r.hold_sub_buffer(&sub_a, &lone);  // sub_a is no longer held: ignored
  release(&lone);
  std::vector<std::string> got;
  for (const trace_event& e : events) {
    if (e.action != trace_action::alloc)
      got.push_back(std::string(to_string(e.action)) + " " + std::to_string(e.id));
  }
  const std::string P = std::to_string(p.id), A = std::to_string(a.id), B = std::to_string(b.id),
                    L = std::to_string(l.id);
  EXPECT_EQ(got, (std::vector<std::string>{"release " + A, "free " + B, "release " + P, "free " + A,
                                           "free " + P, "release " + L}));
}

// Without a trace nothing of the program's release is kept.
TEST(Recorder, NoReleasesWithoutATrace) {
  recorder r(with_budget(1 << 20), nullptr);
  int handle = 0;
  recorder::ticket a = r.begin_alloc(4096, trace_kind::buffer, 1);
  r.hold_mem(&handle, a.block);
  EXPECT_EQ(r.begin_release(&handle), 0u);
}

TEST(Recorder, AllocAndFreeAreRecordedInOrderWithDenseIds) {
  std::vector<trace_event> events;
  recorder r(layer_settings{}, std::make_unique<vector_sink>(&events));
  recorder::ticket a = r.begin_alloc(4096, trace_kind::buffer, 1);
  ASSERT_EQ(a.refused, refusal::none);
  r.commit_alloc(a.block);
  recorder::ticket b = r.begin_alloc(100, trace_kind::sub, 0);
  r.commit_alloc(b.block);
  r.free_block(b.block, 0);
  r.free_block(a.block, r.queue_id(&events));
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].action, trace_action::alloc);
  EXPECT_EQ(events[0].size, 4096u);
  EXPECT_EQ(events[0].flags, 1u);
  EXPECT_EQ(events[1].kind, trace_kind::sub);
  EXPECT_EQ(events[3].action, trace_action::free);
  EXPECT_EQ(events[3].id, events[0].id);
  EXPECT_EQ(events[3].queue, 1u);
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, i);
    EXPECT_EQ(events[i].thread, 0u);
    if (i > 0) {
      EXPECT_GE(events[i].time_ns, events[i - 1].time_ns);
    }
  }
  EXPECT_NE(events[0].id, events[1].id);
  EXPECT_EQ(r.outstanding_bytes(), 0u);
}

// With a paged profile the budget is a device with 2 MiB pages and 2.625 MiB of headroom: 64 MiB
// holds 30 pages, and two 1 MiB buffers share one. (NVIDIA's pages, charged at creation here.)
TEST(Recorder, BudgetWithAProfileCommitsPages) {
  std::vector<trace_event> events;
  auto sink = std::make_unique<vector_sink>(&events);
  const std::vector<std::string>& comments = sink->comments;
  layer_settings s = with_budget(64u << 20);
  s.profile = device_model::load_profile("nvidia");
  s.profile->oom_at = device_model::refusal_point::creation;
  s.profile->name = "nvidia-at-creation";
  recorder r(s, std::move(sink));
  EXPECT_FALSE(r.charges_at_first_use());
  recorder::ticket a = r.begin_alloc(1u << 20, trace_kind::buffer, 0);
  recorder::ticket b = r.begin_alloc(1u << 20, trace_kind::buffer, 0);
  ASSERT_EQ(a.refused, refusal::none);
  ASSERT_EQ(b.refused, refusal::none);
  EXPECT_EQ(r.outstanding_bytes(), 2u << 20);
  int pages = 1;
  while (r.begin_alloc(2u << 20, trace_kind::buffer, 0).refused == refusal::none) ++pages;
  EXPECT_EQ(pages, 30);
  ASSERT_FALSE(comments.empty());
  EXPECT_NE(comments.back().find(
                "budget 67108864 bytes, 62914560 outstanding (nvidia-at-creation profile)"),
            std::string::npos)
      << comments.back();
  r.free_block(a.block, 0);
  EXPECT_EQ(r.outstanding_bytes(), 60u << 20) << "the page still holds b";
  r.free_block(b.block, 0);
  EXPECT_EQ(r.outstanding_bytes(), 58u << 20);
}

// With CLPOOL_LAYER_PROFILE=nvidia nothing is charged at creation; first_use() charges, refuses
// with -4 and a comment when the pages do not fit, and a free credits only what was charged.
TEST(Recorder, FirstUseProfileChargesAtFirstUse) {
  std::vector<trace_event> events;
  auto sink = std::make_unique<vector_sink>(&events);
  const std::vector<std::string>& comments = sink->comments;
  layer_settings s = with_budget(8u << 20);
  s.profile = device_model::load_profile("nvidia");
  recorder r(s, std::move(sink));
  ASSERT_TRUE(r.charges_at_first_use());
  std::vector<block_info> blocks;
  for (int i = 0; i < 3; ++i) {
    recorder::ticket t = r.begin_alloc(2u << 20, trace_kind::buffer, 0);
    ASSERT_EQ(t.refused, refusal::none) << "creation never fails";
    r.commit_alloc(t.block);
    blocks.push_back(t.block);
  }
  EXPECT_EQ(r.outstanding_bytes(), 0u);
  EXPECT_EQ(r.first_use(blocks[0], "clEnqueueFillBuffer"), 0);
  EXPECT_EQ(r.first_use(blocks[0], "clEnqueueFillBuffer"), 0) << "a second use charges nothing";
  EXPECT_EQ(r.first_use(blocks[1], "clEnqueueFillBuffer"), 0);
  EXPECT_EQ(r.outstanding_bytes(), 4u << 20);
  EXPECT_EQ(r.first_use(blocks[2], "clEnqueueWriteBuffer"), -4)
      << "5.375 MiB usable: no third page";
  ASSERT_FALSE(comments.empty());
  EXPECT_NE(
      comments.back().find("failure: first use of id 3 (2097152 bytes) by clEnqueueWriteBuffer: "
                           "status -4 from the layer: budget 8388608 bytes, 4194304 committed "
                           "(nvidia profile)"),
      std::string::npos)
      << comments.back();
  r.free_block(blocks[2], 0);  // never charged: nothing to credit
  EXPECT_EQ(r.outstanding_bytes(), 4u << 20);
  r.free_block(blocks[0], 0);
  EXPECT_EQ(r.outstanding_bytes(), 2u << 20);
  // A host block is never counted, so its use charges nothing.
  recorder::ticket h = r.begin_alloc(4u << 20, trace_kind::host, 0);
  EXPECT_EQ(r.first_use(h.block, "clEnqueueMapBuffer"), 0);
  EXPECT_EQ(r.outstanding_bytes(), 2u << 20);
}

// A charge can be given back (the driver rejected the enqueue); SVM blocks are found by any
// pointer into them, charged once, and credited when freed.
TEST(Recorder, FirstUseChargesCanBeUndoneAndSvmBlocksAreFoundByInteriorPointers) {
  layer_settings s = with_budget(8u << 20);
  s.profile = device_model::load_profile("nvidia");
  s.profile->svm_oom_at = device_model::refusal_point::first_use;
  recorder r(s, nullptr);
  recorder::ticket b = r.begin_alloc(2u << 20, trace_kind::buffer, 0);
  bool charged = false;
  EXPECT_EQ(r.first_use(b.block, "clEnqueueWriteBuffer", &charged), 0);
  EXPECT_TRUE(charged);
  EXPECT_EQ(r.first_use(b.block, "clEnqueueWriteBuffer", &charged), 0);
  EXPECT_FALSE(charged) << "already charged";
  r.undo_first_use(b.block);
  EXPECT_FALSE(b.block.charged);
  EXPECT_EQ(r.outstanding_bytes(), 0u);

  static char arena[3 << 20];  // stands for SVM addresses
  recorder::ticket svm = r.begin_alloc(1u << 20, trace_kind::svm, 0);
  r.remember_svm(arena + 4096, svm.block);
  r.commit_alloc(svm.block);
  const void* start = nullptr;
  EXPECT_EQ(r.first_use_svm(arena, "clEnqueueSVMMemcpy", start), 0);
  EXPECT_EQ(start, nullptr) << "before the block: not the layer's";
  EXPECT_EQ(r.first_use_svm(arena + 4096 + (1u << 20), "clEnqueueSVMMemcpy", start), 0);
  EXPECT_EQ(start, nullptr) << "just past the block";
  EXPECT_EQ(r.outstanding_bytes(), 0u);
  EXPECT_EQ(r.first_use_svm(arena + 4096 + 100, "clEnqueueSVMMemFill", start), 0);
  EXPECT_EQ(start, arena + 4096);
  EXPECT_EQ(r.outstanding_bytes(), 2u << 20) << "one 2 MiB page (nvidia)";
  EXPECT_EQ(r.first_use_svm(arena + 4096, "clEnqueueSVMMap", start), 0);
  EXPECT_EQ(start, nullptr) << "charged once";
  r.undo_first_use_svm(arena + 4096);
  EXPECT_EQ(r.outstanding_bytes(), 0u);
  EXPECT_EQ(r.first_use_svm(arena + 4096, "clEnqueueSVMMap", start), 0);
  std::optional<block_info> freed = r.forget_svm(arena + 4096);
  ASSERT_TRUE(freed);
  EXPECT_TRUE(freed->charged) << "the charge lives in the recorder's copy";
  r.free_block(*freed, 0);
  EXPECT_EQ(r.outstanding_bytes(), 0u);
}

// Buffers and SVM blocks follow their own keys of the profile: with nvidia's (buffers at first
// use, SVM at creation) an SVM block is charged by begin_alloc and refused there when it does not
// fit, and its uses charge nothing (svm_oom_at = first_use: FirstUseChargesCanBeUndone... above).
TEST(Recorder, SvmBlocksAreChargedWhereTheProfileSays) {
  layer_settings s = with_budget(8u << 20);
  s.profile = device_model::load_profile("nvidia");
  {
    recorder r(s, nullptr);
    EXPECT_TRUE(r.charges_at_first_use());
    static char arena[8 << 20];
    recorder::ticket a = r.begin_alloc(4u << 20, trace_kind::svm, 0);
    ASSERT_EQ(a.refused, refusal::none);
    EXPECT_TRUE(a.block.charged);
    EXPECT_EQ(r.outstanding_bytes(), 4u << 20);
    r.remember_svm(arena, a.block);
    const void* start = nullptr;
    EXPECT_EQ(r.first_use_svm(arena, "clEnqueueSVMMemFill", start), 0);
    EXPECT_EQ(start, nullptr) << "charged at creation: nothing to charge at its use";
    EXPECT_EQ(r.outstanding_bytes(), 4u << 20);
    recorder::ticket b = r.begin_alloc(2u << 20, trace_kind::svm, 0);
    EXPECT_EQ(b.refused, refusal::budget) << "5.375 MiB usable, 4 MiB taken: no 2 MiB page";
    EXPECT_EQ(b.status, -4);
    std::optional<block_info> freed = r.forget_svm(arena);
    ASSERT_TRUE(freed);
    r.free_block(*freed, 0);
    EXPECT_EQ(r.outstanding_bytes(), 0u);
  }
}

TEST(Recorder, BudgetRefusesAndCreditsOnFree) {
  std::vector<trace_event> events;
  auto sink = std::make_unique<vector_sink>(&events);
  const std::vector<std::string>& comments = sink->comments;
  recorder r(with_budget(1000), std::move(sink));
  recorder::ticket a = r.begin_alloc(600, trace_kind::buffer, 0);
  ASSERT_EQ(a.refused, refusal::none);
  r.commit_alloc(a.block);
  // host and sub blocks do not count against the budget.
  EXPECT_EQ(r.begin_alloc(5000, trace_kind::host, 0).refused, refusal::none);
  EXPECT_EQ(r.begin_alloc(5000, trace_kind::sub, 0).refused, refusal::none);
  recorder::ticket b = r.begin_alloc(401, trace_kind::svm, 0);
  EXPECT_EQ(b.refused, refusal::budget);
  ASSERT_EQ(events.back().action, trace_action::alloc_failed);
  EXPECT_EQ(events.back().size, 401u);
  EXPECT_EQ(events.back().kind, trace_kind::svm);
  EXPECT_EQ(events.back().id, 0u);  // FORMAT.md: alloc_failed uses id 0
  EXPECT_EQ(comments, std::vector<std::string>{
                          "failure: seq 1 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the "
                          "layer: budget 1000 bytes, 600 outstanding"});
  recorder::ticket c = r.begin_alloc(400, trace_kind::buffer, 0);
  EXPECT_EQ(c.refused, refusal::none);
  EXPECT_EQ(r.outstanding_bytes(), 1000u);
  r.abort_alloc(c.block, "");  // the driver said "invalid value"
  EXPECT_EQ(r.outstanding_bytes(), 600u);
  r.free_block(a.block, 0);
  EXPECT_EQ(r.outstanding_bytes(), 0u);
  EXPECT_EQ(r.begin_alloc(1000, trace_kind::buffer, 0).refused, refusal::none);
}

// clpool_layer_set_budget: a new budget applies to later requests; what is charged stays charged.
TEST(Recorder, SetBudgetChangesTheBudgetForLaterRequests) {
  std::vector<trace_event> events;
  auto sink = std::make_unique<vector_sink>(&events);
  vector_sink* comments = sink.get();
  recorder r(with_budget(1000), std::move(sink));
  recorder::ticket a = r.begin_alloc(800, trace_kind::buffer, 0);
  ASSERT_EQ(a.refused, refusal::none);
  r.commit_alloc(a.block);
  ASSERT_TRUE(r.set_budget(500));  // below what is charged: later requests fail
  EXPECT_EQ(r.budget_bytes(), 500u);
  EXPECT_EQ(r.begin_alloc(1, trace_kind::buffer, 0).refused, refusal::budget);
  EXPECT_EQ(comments->comments.back(),
            "failure: seq 1 status -4 (CL_MEM_OBJECT_ALLOCATION_FAILURE) from the layer: budget "
            "500 bytes, 800 outstanding");
  ASSERT_TRUE(r.set_budget(std::uint64_t{1} << 62));
  EXPECT_EQ(r.begin_alloc(1000, trace_kind::buffer, 0).refused, refusal::none);
  EXPECT_FALSE(r.set_budget(0));
  EXPECT_FALSE(r.set_budget((std::uint64_t{1} << 62) + 1));
  EXPECT_EQ(r.budget_bytes(), std::uint64_t{1} << 62);
}

TEST(Recorder, HugeRequestDoesNotOverflowTheBudgetCheck) {
  recorder r(with_budget(1000), nullptr);
  EXPECT_EQ(r.begin_alloc(UINT64_MAX, trace_kind::buffer, 0).refused, refusal::budget);
}

TEST(Recorder, RequestsAboveTwoToThe62AreNotRecordedAndRecordingGoesOn) {
  std::vector<trace_event> events;
  recorder r(with_budget(1000), std::make_unique<vector_sink>(&events));
  testing::internal::CaptureStderr();
  EXPECT_EQ(r.begin_alloc(UINT64_MAX, trace_kind::buffer, 0).refused, refusal::budget);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("above 2^62"), std::string::npos);
  EXPECT_TRUE(events.empty());
  r.commit_alloc(r.begin_alloc(10, trace_kind::buffer, 0).block);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].seq, 0u);
  EXPECT_TRUE(r.recording());
}

TEST(Recorder, DriverOutOfMemoryIsRecordedButInvalidArgumentsAreNot) {
  std::vector<trace_event> events;
  auto sink = std::make_unique<vector_sink>(&events);
  const std::vector<std::string>& comments = sink->comments;
  recorder r(layer_settings{}, std::move(sink));
  r.abort_alloc(r.begin_alloc(1, trace_kind::buffer, 0).block, "");
  EXPECT_TRUE(events.empty());
  r.abort_alloc(r.begin_alloc(2, trace_kind::buffer, 0).block, "status -5 from the driver");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].action, trace_action::alloc_failed);
  EXPECT_EQ(events[0].size, 2u);
  EXPECT_EQ(comments, std::vector<std::string>{"failure: seq 0 status -5 from the driver"});
}

TEST(Recorder, FailNthCountsDeviceAllocationsOnly) {
  layer_settings s;
  s.fail_nth = 3;
  recorder r(s, nullptr);
  EXPECT_EQ(r.begin_alloc(1, trace_kind::buffer, 0).refused, refusal::none);
  EXPECT_EQ(r.begin_alloc(1, trace_kind::sub, 0).refused, refusal::none);  // not counted
  EXPECT_EQ(r.begin_alloc(1, trace_kind::svm, 0).refused, refusal::none);
  EXPECT_EQ(r.begin_alloc(1, trace_kind::host, 0).refused, refusal::injected_nth);
  EXPECT_EQ(r.begin_alloc(1, trace_kind::buffer, 0).refused, refusal::none);
}

std::vector<bool> draw(double p, std::uint64_t seed, int n) {
  layer_settings s;
  s.fail_probability = p;
  s.seed = seed;
  recorder r(s, nullptr);
  std::vector<bool> failed;
  for (int i = 0; i < n; ++i) {
    failed.push_back(r.begin_alloc(1, trace_kind::buffer, 0).refused == refusal::injected_random);
  }
  return failed;
}

TEST(Recorder, FailProbabilityIsSeededAndRoughlyRight) {
  EXPECT_EQ(draw(0.3, 7, 200), draw(0.3, 7, 200));
  EXPECT_NE(draw(0.3, 7, 200), draw(0.3, 8, 200));
  const std::vector<bool> d = draw(0.3, 7, 2000);
  const auto hits = std::count(d.begin(), d.end(), true);
  EXPECT_GT(hits, 450);
  EXPECT_LT(hits, 750);
  const std::vector<bool> none = draw(0.0, 1, 100);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
  const std::vector<bool> all = draw(1.0, 1, 100);
  EXPECT_EQ(std::count(all.begin(), all.end(), true), 100);
}

TEST(Recorder, SvmPointersAreRememberedOnce) {
  recorder r(layer_settings{}, nullptr);
  int x = 0;
  recorder::ticket t = r.begin_alloc(64, trace_kind::svm, 0);
  r.remember_svm(&x, t.block);
  std::optional<block_info> b = r.forget_svm(&x);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->id, t.block.id);
  EXPECT_FALSE(r.forget_svm(&x));
}

TEST(Recorder, QueueIdsAreDenseInOrderOfFirstSight) {
  recorder r(layer_settings{}, nullptr);
  int a = 0, b = 0;
  EXPECT_EQ(r.queue_id(nullptr), 0u);
  EXPECT_EQ(r.queue_id(&b), 1u);
  EXPECT_EQ(r.queue_id(&a), 2u);
  EXPECT_EQ(r.queue_id(&b), 1u);
}

TEST(Recorder, ThreadsGetIdsInOrderOfFirstEvent) {
  std::vector<trace_event> events;
  recorder r(layer_settings{}, std::make_unique<vector_sink>(&events));
  r.commit_alloc(r.begin_alloc(1, trace_kind::buffer, 0).block);
  std::thread([&] { r.commit_alloc(r.begin_alloc(2, trace_kind::buffer, 0).block); }).join();
  r.commit_alloc(r.begin_alloc(3, trace_kind::buffer, 0).block);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].thread, 0u);
  EXPECT_EQ(events[1].thread, 1u);
  EXPECT_EQ(events[2].thread, 0u);
}

TEST(Recorder, ConcurrentAllocAndFreeKeepTheAccountExact) {
  std::vector<trace_event> events;
  recorder r(with_budget(1 << 20), std::make_unique<vector_sink>(&events));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        recorder::ticket k = r.begin_alloc(100, trace_kind::buffer, 0);
        if (k.refused != refusal::none) continue;
        r.commit_alloc(k.block);
        r.free_block(k.block, 0);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(r.outstanding_bytes(), 0u);
  ASSERT_EQ(events.size(), 4000u);
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq, i);
}

TEST(Recorder, SinkFailureStopsRecordingButNotAccounting) {
  std::vector<trace_event> events;
  recorder r(with_budget(10), std::make_unique<vector_sink>(&events, 1));
  r.commit_alloc(r.begin_alloc(1, trace_kind::buffer, 0).block);
  EXPECT_TRUE(r.recording());
  testing::internal::CaptureStderr();
  r.commit_alloc(r.begin_alloc(2, trace_kind::buffer, 0).block);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("trace is incomplete"), std::string::npos);
  EXPECT_FALSE(r.recording());
  EXPECT_EQ(events.size(), 1u);
  EXPECT_EQ(r.begin_alloc(8, trace_kind::buffer, 0).refused, refusal::budget);
}

// What a harness in the process asks (the pytest plugin through clpool_layer_trace_error and
// clpool_layer_threads), and CLPOOL_LAYER_ERRORS for clpool record.
TEST(Recorder, TheTraceFailureAndItsCauseAreKeptAndWrittenToTheErrorsFile) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string errors = std::string(tmp ? tmp : "/tmp") + "/recorder_errors.txt";
  std::remove(errors.c_str());
  layer_settings s = with_budget(100);
  s.errors_path = errors;
  std::vector<trace_event> events;
  recorder r(s, std::make_unique<vector_sink>(&events, 1));
  r.commit_alloc(r.begin_alloc(1, trace_kind::buffer, 0).block);
  EXPECT_EQ(r.trace_failure(), "");
  testing::internal::CaptureStderr();
  r.commit_alloc(r.begin_alloc(2, trace_kind::buffer, 0).block);
  const std::string said = testing::internal::GetCapturedStderr();
  const std::string want =
      "could not write to the trace file (No space left on device); the trace is incomplete after "
      "event 1";
  EXPECT_EQ(r.trace_failure(), want);
  EXPECT_NE(said.find(want), std::string::npos) << said;
  std::ifstream in(errors);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line + "\n", errors_file_header);  // the file is the layer's own, made here
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, want);
}

// CLPOOL_LAYER_FAIL_FIRST_USE_NTH and CLPOOL_LAYER_REPORT, what clpool sweep drives: the Nth first
// use fails with the profile's status and nothing else does; the report lists every point in order,
// the fault injected, and what was still held at exit.
std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Recorder, FailFirstUseNthAndTheReport) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string report = std::string(tmp ? tmp : "/tmp") + "/recorder_report.txt";
  std::remove(report.c_str());
  std::vector<trace_event> events;
  auto sink = std::make_unique<vector_sink>(&events);
  const std::vector<std::string>& comments = sink->comments;
  layer_settings s = with_budget(1u << 30);
  s.profile = device_model::load_profile("nvidia");
  s.fail_first_use_nth = 2;
  s.report_path = report;
  recorder r(s, std::move(sink));
  ASSERT_EQ(r.open_report(), "");
  std::vector<block_info> blocks;
  for (int i = 0; i < 3; ++i) {
    recorder::ticket t = r.begin_alloc(4096, trace_kind::buffer, 0);
    ASSERT_EQ(t.refused, refusal::none);
    r.commit_alloc(t.block);
    r.hold_mem(&blocks + i + 1, t.block);  // the program holds it (a handle per block)
    blocks.push_back(t.block);
  }
  EXPECT_EQ(r.first_use(blocks[0], "clEnqueueFillBuffer"), 0);
  EXPECT_EQ(r.first_use(blocks[1], "clEnqueueWriteBuffer"), -4) << "the second first use";
  EXPECT_NE(comments.back().find(
                "first use of id 2 (4096 bytes) by clEnqueueWriteBuffer: status -4 from the "
                "layer: CLPOOL_LAYER_FAIL_FIRST_USE_NTH=2 (nvidia profile)"),
            std::string::npos)
      << comments.back();
  EXPECT_EQ(r.first_use(blocks[1], "clEnqueueWriteBuffer"), 0)
      << "a retry is another first use: it fits";
  EXPECT_EQ(r.first_use(blocks[2], "clEnqueueNDRangeKernel"), 0);
  r.report_exit();
  // No stacks recorded here: stack 0.
  EXPECT_EQ(
      lines_of(report),
      (std::vector<std::string>{
          "alloc 1 1 4096 buffer 0", "alloc 2 2 4096 buffer 0", "alloc 3 3 4096 buffer 0",
          "first_use 1 1 0 clEnqueueFillBuffer", "first_use 2 2 0 clEnqueueWriteBuffer",
          "injected first_use 2 2 0 clEnqueueWriteBuffer", "first_use 3 2 0 clEnqueueWriteBuffer",
          "first_use 4 3 0 clEnqueueNDRangeKernel", "exit live_blocks 3 live_bytes 12288"}));
}

// What clpool sweep counts as held at exit: a buffer the program released while it kept a
// sub-buffer of it is still reached through that sub-buffer.
TEST(Recorder, AParentReachedThroughAKeptSubBufferIsLiveAtExit) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string report = std::string(tmp ? tmp : "/tmp") + "/recorder_report_sub.txt";
  std::remove(report.c_str());
  std::vector<trace_event> events;
  layer_settings s;
  s.report_path = report;
  recorder r(s, std::make_unique<vector_sink>(&events));
  ASSERT_EQ(r.open_report(), "");
  int parent = 0, sub = 0;
  recorder::ticket p = r.begin_alloc(8192, trace_kind::buffer, 0);
  r.commit_alloc(p.block);
  r.hold_mem(&parent, p.block);
  recorder::ticket v = r.begin_alloc(64, trace_kind::sub, 0);
  r.commit_alloc(v.block);
  r.hold_mem(&sub, v.block);
  r.hold_sub_buffer(&sub, &parent);
  r.end_release(&parent, r.begin_release(&parent), /*released=*/true);
  r.report_exit();
  const std::vector<std::string> lines = lines_of(report);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "exit live_blocks 1 live_bytes 8192");
}

TEST(Recorder, AnInjectedAllocationFailureIsReportedWithTheProfilesStatus) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string report = std::string(tmp ? tmp : "/tmp") + "/recorder_report2.txt";
  std::remove(report.c_str());
  layer_settings s;
  s.fail_nth = 2;
  s.report_path = report;
  s.budget_bytes = 1u << 30;
  s.profile = device_model::parse_profile("name = five\noom_status = -5\n", "five");
  std::vector<trace_event> events;
  recorder r(s, std::make_unique<vector_sink>(&events));
  ASSERT_EQ(r.open_report(), "");
  EXPECT_EQ(r.begin_alloc(10, trace_kind::buffer, 0).refused, refusal::none);
  const recorder::ticket t = r.begin_alloc(20, trace_kind::svm, 0);
  EXPECT_EQ(t.refused, refusal::injected_nth);
  EXPECT_EQ(t.status, -5);
  EXPECT_EQ(lines_of(report),
            (std::vector<std::string>{"alloc 1 1 10 buffer 0", "alloc 2 2 20 svm 0",
                                      "injected alloc 2 2"}));
  EXPECT_EQ(recorder(layer_settings{}, nullptr).open_report(), "")
      << "no report asked: nothing opened";
  layer_settings bad;
  bad.report_path = "/nonexistent/dir/report.txt";
  EXPECT_NE(recorder(bad, nullptr).open_report().find("No such file or directory"),
            std::string::npos);
  // A file that is not a report (here a trace) is never appended to.
  const std::string trace = std::string(tmp ? tmp : "/tmp") + "/recorder_not_a_report.trace";
  { std::ofstream(trace, std::ios::trunc) << "clpool-trace 3\n# source: layer\n"; }
  layer_settings other;
  other.report_path = trace;
  EXPECT_NE(recorder(other, nullptr).open_report().find("is not a report the layer wrote"),
            std::string::npos);
  EXPECT_EQ(lines_of(trace), (std::vector<std::string>{"clpool-trace 3", "# source: layer"}));
  // One the layer wrote is appended to (each sweep run's, each process of a program).
  layer_settings again;
  again.report_path = report;
  EXPECT_EQ(recorder(again, nullptr).open_report(), "");
}

// CLPOOL_LAYER_FAIL_UNTIL_FREE: after the injected failure the device stays full: a retry (as
// PyOpenCL's after its garbage collection) fails too, a smaller request does not, and once the
// program frees device memory requests fit again.
TEST(Recorder, FailUntilFreeKeepsTheDeviceFullUntilAFree) {
  layer_settings s;
  s.fail_nth = 2;
  s.fail_until_free = true;
  std::vector<trace_event> events;
  recorder r(s, std::make_unique<vector_sink>(&events));
  const recorder::ticket a = r.begin_alloc(100, trace_kind::buffer, 0);
  ASSERT_EQ(a.refused, refusal::none);
  r.commit_alloc(a.block);
  EXPECT_EQ(r.begin_alloc(4096, trace_kind::buffer, 0).refused, refusal::injected_nth);
  EXPECT_EQ(r.begin_alloc(4096, trace_kind::buffer, 0).refused, refusal::still_full) << "the retry";
  EXPECT_EQ(r.begin_alloc(8192, trace_kind::svm, 0).refused, refusal::still_full);
  const recorder::ticket small = r.begin_alloc(10, trace_kind::buffer, 0);
  EXPECT_EQ(small.refused, refusal::none) << "smaller than what failed";
  r.commit_alloc(small.block);
  EXPECT_EQ(r.begin_alloc(64, trace_kind::host, 0).refused, refusal::none)
      << "host memory is not the device's";
  r.free_block(a.block, 0);
  EXPECT_EQ(r.begin_alloc(4096, trace_kind::buffer, 0).refused, refusal::none)
      << "freed: it fits again";
}

TEST(Recorder, ArmedFromNowAndCountedPoints) {
  layer_settings s = with_budget(1u << 30);
  s.profile = device_model::load_profile("nvidia");
  std::vector<trace_event> events;
  recorder r(s, std::make_unique<vector_sink>(&events));
  std::vector<block_info> blocks;
  for (int i = 0; i < 2; ++i) {
    const recorder::ticket t = r.begin_alloc(100, trace_kind::buffer, 0);
    r.commit_alloc(t.block);
    blocks.push_back(t.block);
  }
  EXPECT_EQ(r.first_use(blocks[0], "clEnqueueWriteBuffer"), 0);
  EXPECT_EQ(r.fault_points(), std::make_pair(std::uint64_t{2}, std::uint64_t{1}));
  r.arm(false, 2, true);  // the second attempt from now: attempt 4
  EXPECT_EQ(r.begin_alloc(100, trace_kind::buffer, 0).refused, refusal::none);
  EXPECT_EQ(r.begin_alloc(100, trace_kind::buffer, 0).refused, refusal::injected_nth);
  EXPECT_EQ(r.begin_alloc(100, trace_kind::buffer, 0).refused, refusal::still_full) << "until free";
  r.arm(true, 1, false);  // the next first use
  EXPECT_EQ(r.first_use(blocks[1], "clEnqueueWriteBuffer"), -4);
  EXPECT_EQ(r.first_use(blocks[1], "clEnqueueWriteBuffer"), 0) << "once: the retry fits";
  r.arm(false, 0, false);  // disarmed
  EXPECT_EQ(r.begin_alloc(100, trace_kind::buffer, 0).refused, refusal::none);
}

TEST(Recorder, NextSeqIsTheNextEventsSeq) {
  std::vector<trace_event> events;
  recorder r(layer_settings{}, std::make_unique<vector_sink>(&events));
  EXPECT_EQ(r.next_seq(), 0u);
  r.commit_alloc(r.begin_alloc(1, trace_kind::buffer, 0).block);
  EXPECT_EQ(r.next_seq(), 1u);
  r.commit_alloc(r.begin_alloc(2, trace_kind::buffer, 0).block);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].seq, 1u);
  EXPECT_EQ(r.next_seq(), 2u);
}

TEST(Recorder, ThreadsAreKnownByTheirOsIds) {
  std::vector<trace_event> events;
  recorder r(layer_settings{}, std::make_unique<vector_sink>(&events));
  r.commit_alloc(r.begin_alloc(1, trace_kind::buffer, 0).block);
  std::uint64_t other = 0;
  std::thread([&] {
    other = static_cast<std::uint64_t>(::gettid());
    r.commit_alloc(r.begin_alloc(2, trace_kind::buffer, 0).block);
  }).join();
  const auto threads = r.threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0], std::make_pair(static_cast<std::uint64_t>(::gettid()), std::uint64_t{0}));
  EXPECT_EQ(threads[1], std::make_pair(other, std::uint64_t{1}));
}

}  // namespace
}  // namespace clpool::layer
