#include "tools/layer/recorder.h"

#include "common/cl_status.h"
#include "common/text_escape.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string_view>
#include <thread>

namespace clpool::layer {
namespace {

// Distinguishes recorder instances so a thread's cached id never leaks from one recorder (say, in
// a unit test) to the next one built at the same address.
std::atomic<std::uint64_t> next_instance{1};

struct cached_thread_id {
  std::uint64_t instance = 0;
  std::uint64_t id = 0;
};
thread_local cached_thread_id this_thread;

std::uint64_t instance_of(const void*) { return next_instance.fetch_add(1); }

}  // namespace

bool counts_against_budget(trace::trace_kind kind) { return trace::takes_device_memory(kind); }

recorder::recorder(const layer_settings& settings, std::unique_ptr<event_sink> sink)
    : settings_(settings),
      sink_(std::move(sink)),
      start_(std::chrono::steady_clock::now()),
      budget_(settings.profile ? *settings.profile : device_model::device_profile{},
              settings.budget_bytes ? *settings.budget_bytes : ~std::uint64_t{0}),
      buffers_first_use_(charges_buffers_at_first_use(settings)),
      svm_first_use_(charges_svm_at_first_use(settings)),
      watches_frees_(sink_ != nullptr || settings.budget_bytes.has_value()),
      rng_(settings.seed),
      instance_(instance_of(this)) {}

int refusal_status(const layer_settings& settings) {
  return settings.profile ? settings.profile->oom_status : -4;
}

std::string recorder::open_report() {
  if (!settings_.report_path) return "";
  std::lock_guard lock(mutex_);
  return report_.open(*settings_.report_path);
}

// Counts a device allocation attempt (FAIL_NTH's, FAIL_PROB's and FAIL_UNTIL_FREE's point) and
// sets t.refused when one of them fails it.
void recorder::count_attempt_locked(ticket& t) {
  const std::uint64_t size = t.block.size;
  const trace::trace_kind kind = t.block.kind;
  ++attempts_;
  // Draw for every attempt, refused or not, so a given seed fails the same attempts whatever
  // else is configured.
  const bool random_hit =
      settings_.fail_probability &&
      static_cast<double>(rng_() >> 11) * 0x1.0p-53 < *settings_.fail_probability;
  if (fails_alloc(attempts_)) {
    t.refused = refusal::injected_nth;
    if (until_free() && counts_against_budget(kind)) full_from_ = std::max<std::uint64_t>(size, 1);
  } else if (full_from_ != 0 && counts_against_budget(kind) && size >= full_from_) {
    t.refused = refusal::still_full;
  } else if (random_hit) {
    t.refused = refusal::injected_random;
  }
  if (report_.is_open()) {
    report_.line("alloc " + std::to_string(attempts_) + " " + std::to_string(t.block.id) + " " +
                 std::to_string(size) + " " + std::string(trace::to_string(kind)) + " " +
                 std::to_string(t.block.stack));
    if (t.refused == refusal::injected_nth) {
      report_.line("injected alloc " + std::to_string(attempts_) + " " +
                   std::to_string(t.block.id));
    }
  }
}

// The "# failure:" comment of a refused ticket: its status and who refused, and why.
std::string recorder::refusal_reason_locked(const ticket& t, std::uint64_t max_alloc) const {
  std::string why = "status " + std::to_string(t.status) + " (" +
                    std::string(common::status_name(t.status)) + ") from the layer: ";
  const std::string profile = settings_.profile ? " (" + settings_.profile->name + " profile)" : "";
  switch (t.refused) {
    case refusal::above_max_alloc:
      return why + "above CL_DEVICE_MAX_MEM_ALLOC_SIZE, " + std::to_string(max_alloc) + " bytes" +
             profile;
    case refusal::budget:
      return why + "budget " + std::to_string(budget_.capacity()) + " bytes, " +
             std::to_string(budget_.committed()) + " outstanding" + profile;
    case refusal::injected_nth:
      return why + (settings_.fail_nth && attempts_ == *settings_.fail_nth
                        ? "CLPOOL_LAYER_FAIL_NTH=" + std::to_string(*settings_.fail_nth)
                        : "an injected failure (clpool_layer_arm)");
    case refusal::still_full:
      return why + "CLPOOL_LAYER_FAIL_UNTIL_FREE: nothing freed since the injected failure";
    default:
      return why + "CLPOOL_LAYER_FAIL_PROB";
  }
}

recorder::ticket recorder::begin_alloc(std::uint64_t size, trace::trace_kind kind,
                                       std::uint64_t flags, std::uint64_t max_alloc) {
  std::lock_guard lock(mutex_);
  ticket t;
  t.block = block_info{next_id_++, size, kind, flags, counts_against_budget(kind)};
  if (capturer_ && sink_ && !sink_failed_) {
    t.block.stack = capturer_->capture(sites_);  // before the events that name it
    if (!sites_.stacks.empty() || !sites_.frames.empty()) write_sites_locked(false);
  }
  if (size > max_alloc) {
    // An invalid size, not an allocation attempt: the device refuses it before any memory.
    t.refused = refusal::above_max_alloc;
    t.status = common::status_invalid_buffer_size;
  } else if (kind != trace::trace_kind::sub) {
    count_attempt_locked(t);
  }
  const bool at_first_use = kind == trace::trace_kind::svm ? svm_first_use_ : buffers_first_use_;
  if (t.refused == refusal::none && t.block.counted && !at_first_use) {
    if (budget_.try_commit(size, t.block.where)) {
      t.block.charged = true;
    } else {
      t.refused = refusal::budget;
    }
  }
  if (t.refused != refusal::none) {
    if (t.refused != refusal::above_max_alloc) t.status = refusal_status(settings_);
    write_locked(trace::trace_action::alloc_failed, t.block, 0,
                 refusal_reason_locked(t, max_alloc));
  }
  return t;
}

void recorder::report_exit() noexcept {
  std::lock_guard lock(mutex_);
  if (!report_.is_open() || exit_reported_) return;
  exit_reported_ = true;
  std::uint64_t blocks = 0, bytes = 0;
  const auto count = [&](const block_info& block) {
    if (!counts_against_budget(block.kind)) return;
    ++blocks;
    bytes += block.size;
  };
  for (const auto& [handle, held] : held_) count(held.block);
  for (const auto& [pointer, block] : svm_blocks_) count(block);
  // Released, but a sub-buffer the program holds still reaches it.
  for (const auto& [id, block] : release_after_subs_) count(block);
  report_.line("exit live_blocks " + std::to_string(blocks) + " live_bytes " +
               std::to_string(bytes));
}

void recorder::commit_alloc(const block_info& block) {
  if (sink_ == nullptr) return;  // set once, at construction: nothing to record, no lock needed
  std::lock_guard lock(mutex_);
  write_locked(trace::trace_action::alloc, block, 0);
}

void recorder::abort_alloc(const block_info& block, std::string_view failure) {
  std::lock_guard lock(mutex_);
  if (block.charged) budget_.release(block.where, block.size);
  if (!failure.empty()) write_locked(trace::trace_action::alloc_failed, block, 0, failure);
}

void recorder::free_block(const block_info& block, std::uint64_t queue, const void* handle) {
  std::lock_guard lock(mutex_);
  if (counts_against_budget(block.kind)) memory_freed_locked();
  if (block.charged) budget_.release(block.where, block.size);
  if (sink_ != nullptr) {
    if (handle != nullptr) {
      // Destroyed while the program held it (it over-released, or the driver tore it down): forget
      // it, unless the handle already names a newer buffer at the same address.
      if (auto it = held_.find(handle); it != held_.end() && it->second.block.id == block.id) {
        held_.erase(it);
      }
    }
    // Freed during the program's own clReleaseMemObject: one moment, no `release` to record.
    std::erase_if(releasing_, [&](const block_info& b) { return b.id == block.id; });
    if (awaiting_free_.erase(block.id) != 0)
      awaiting_count_.store(awaiting_free_.size(), std::memory_order_relaxed);
    // A parent the driver freed before its sub-buffers went: its `free` is both moments.
    if (!release_after_subs_.empty() && release_after_subs_.erase(block.id) != 0)
      subs_held_.erase(block.id);
  }
  write_locked(trace::trace_action::free, block, queue);
  if (sink_ != nullptr && !parent_of_sub_.empty()) sub_let_go_locked(block.id);
}

void recorder::hold_mem(const void* handle, const block_info& block) {
  if (sink_ == nullptr) return;
  std::lock_guard lock(mutex_);
  held_[handle] = held_mem{block, 1};
}

void recorder::retain_mem(const void* handle) {
  if (sink_ == nullptr) return;
  std::lock_guard lock(mutex_);
  if (auto it = held_.find(handle); it != held_.end()) ++it->second.refs;
}

std::uint64_t recorder::begin_release(const void* handle) {
  if (sink_ == nullptr) return 0;
  std::lock_guard lock(mutex_);
  auto it = held_.find(handle);
  if (it == held_.end() || --it->second.refs != 0) return 0;
  // Forgotten before the driver may destroy it: a buffer created later at the same address is
  // another block.
  releasing_.push_back(it->second.block);
  held_.erase(it);
  return releasing_.back().id;
}

void recorder::end_release(const void* handle, std::uint64_t id, bool released) {
  std::lock_guard lock(mutex_);
  const auto it = std::find_if(releasing_.begin(), releasing_.end(),
                               [id](const block_info& b) { return b.id == id; });
  if (it == releasing_.end()) return;  // the driver freed it during the call: `free` said it all
  const block_info block = *it;
  releasing_.erase(it);
  if (!released) {  // the driver refused the call: the program still holds its reference
    held_.try_emplace(handle, held_mem{block, 1});
    return;
  }
  if (!subs_held_.empty() && subs_held_.count(block.id) != 0) {  // reachable through a sub
    release_after_subs_.emplace(block.id, block);
    return;
  }
  record_release_locked(block);
  if (!parent_of_sub_.empty()) sub_let_go_locked(block.id);
}

void recorder::record_release_locked(const block_info& block) {
  awaiting_free_.insert(block.id);
  awaiting_count_.store(awaiting_free_.size(), std::memory_order_relaxed);
  if (counts_against_budget(block.kind)) memory_freed_locked();  // the program gave it up
  write_locked(trace::trace_action::release, block, 0);
}

void recorder::hold_sub_buffer(const void* sub, const void* parent) {
  if (sink_ == nullptr) return;
  std::lock_guard lock(mutex_);
  const auto s = held_.find(sub), p = held_.find(parent);
  if (s == held_.end() || p == held_.end()) return;
  parent_of_sub_[s->second.block.id] = p->second.block.id;
  ++subs_held_[p->second.block.id];
}

// The program let go of sub-buffer `sub_id` (its release, or its free when the driver destroyed
// it first): its parent's release, if the program made it, is recorded once no sub-buffer is left.
void recorder::sub_let_go_locked(std::uint64_t sub_id) {
  const auto it = parent_of_sub_.find(sub_id);
  if (it == parent_of_sub_.end()) return;
  const std::uint64_t parent = it->second;
  parent_of_sub_.erase(it);
  const auto n = subs_held_.find(parent);
  if (n == subs_held_.end() || --n->second != 0) return;
  subs_held_.erase(n);
  if (const auto r = release_after_subs_.find(parent); r != release_after_subs_.end()) {
    const block_info block = r->second;
    release_after_subs_.erase(r);
    record_release_locked(block);
  }
}

void recorder::release_svm(const void* pointer, std::uint64_t queue) {
  if (sink_ == nullptr || pointer == nullptr) return;
  std::lock_guard lock(mutex_);
  const auto it = svm_blocks_.find(pointer);
  if (it == svm_blocks_.end() || awaiting_free_.count(it->second.id) != 0) return;
  awaiting_free_.insert(it->second.id);
  awaiting_count_.store(awaiting_free_.size(), std::memory_order_relaxed);
  write_locked(trace::trace_action::release, it->second, queue);
}

void recorder::note_wait(const void* queue) {
  if (awaiting_count_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(mutex_);
  if (awaiting_free_.empty()) return;
  const std::uint64_t id =
      queue == nullptr ? 0 : queues_.try_emplace(queue, queues_.size() + 1).first->second;
  write_locked(trace::trace_action::wait, block_info{}, id);
}

void recorder::remember_svm(const void* pointer, const block_info& block) {
  std::lock_guard lock(mutex_);
  svm_blocks_[pointer] = block;
}

std::optional<block_info> recorder::forget_svm(const void* pointer) {
  std::lock_guard lock(mutex_);
  auto it = svm_blocks_.find(pointer);
  if (it == svm_blocks_.end()) return std::nullopt;
  block_info block = it->second;
  svm_blocks_.erase(it);
  return block;
}

std::uint64_t recorder::queue_id(const void* queue) {
  if (queue == nullptr) return 0;
  std::lock_guard lock(mutex_);
  auto [it, inserted] = queues_.try_emplace(queue, queues_.size() + 1);
  return it->second;
}

bool recorder::set_budget(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  if (bytes > trace::max_event_size || bytes <= budget_.profile().headroom) return false;
  budget_.set_capacity(bytes);
  return true;
}

std::uint64_t recorder::budget_bytes() const {
  std::lock_guard lock(mutex_);
  return budget_.capacity();
}

std::uint64_t recorder::outstanding_bytes() const {
  std::lock_guard lock(mutex_);
  return budget_.committed();
}

bool recorder::recording() const {
  std::lock_guard lock(mutex_);
  return sink_ != nullptr && !sink_failed_;
}

void recorder::process_exiting() noexcept {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (mutex_.try_lock()) {
      std::lock_guard lock(mutex_, std::adopt_lock);
      try {
        write_sites_locked(/*symbolize=*/true);  // the native frames' names, once per address
      } catch (...) {
      }
      if (sink_ != nullptr) sink_->process_exiting();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::uint64_t recorder::thread_id_locked() {
  // Ids are assigned under the mutex, so they appear in the trace in order of first use.
  if (this_thread.instance != instance_) {
    this_thread = {instance_, next_thread_++};
    threads_.emplace_back(static_cast<std::uint64_t>(::gettid()), this_thread.id);
  }
  return this_thread.id;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> recorder::threads() const {
  std::lock_guard lock(mutex_);
  return threads_;
}

std::pair<std::uint64_t, std::uint64_t> recorder::fault_points() const {
  std::lock_guard lock(mutex_);
  return {attempts_, first_uses_};
}

void recorder::arm(bool first_use, std::uint64_t n, bool until_free) {
  std::lock_guard lock(mutex_);
  armed_alloc_ = !first_use && n != 0 ? attempts_ + n : 0;
  armed_first_use_ = first_use && n != 0 ? first_uses_ + n : 0;
  armed_until_free_ = n != 0 && until_free;
  full_from_ = 0;
}

std::uint64_t recorder::next_seq() const {
  std::lock_guard lock(mutex_);
  return next_seq_;
}

std::string recorder::trace_failure() const {
  std::lock_guard lock(mutex_);
  return trace_failure_;
}

void recorder::write_locked(trace::trace_action action, const block_info& block,
                            std::uint64_t queue, std::string_view failure) {
  if (sink_ == nullptr || sink_failed_) return;
  if (block.size > trace::max_event_size) {
    // Only a refused request can be this large (no device has 2^62 bytes), and FORMAT.md calls
    // such a size corrupt, so the writer would refuse it and recording would stop. Skip it.
    if (!warned_oversize_) {
      warned_oversize_ = true;
      std::fprintf(stderr,
                   "clpool_layer: note: not recording a failed request of %llu bytes (above 2^62, "
                   "which traces cannot hold)\n",
                   static_cast<unsigned long long>(block.size));
    }
    return;
  }
  trace::trace_event e;
  e.seq = next_seq_++;
  e.time_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::steady_clock::now() - start_)
                                             .count());
  e.thread = thread_id_locked();
  e.queue = queue;
  e.action = action;
  // FORMAT.md: alloc_failed and wait name no live block, and writers use id 0 for them.
  e.id = action == trace::trace_action::alloc_failed || action == trace::trace_action::wait
             ? 0
             : block.id;
  e.size = block.size;
  e.kind = block.kind;
  e.flags = block.flags;
  if (action == trace::trace_action::alloc || action == trace::trace_action::alloc_failed ||
      action == trace::trace_action::use) {
    e.stack = block.stack;
  }
  bool ok = false;
  try {
    ok = sink_->write(e);
    if (ok && !failure.empty()) {
      ok = sink_->comment("failure", "seq " + std::to_string(e.seq) + " " + std::string(failure));
    }
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok) {
    sink_failed_locked(e.seq);
    return;
  }
  // A program often dies on its out-of-memory (abort, a NULL mapping written through), and the
  // native frames waiting for their names would be named only at exit: name them now, so that
  // the failure's site and the sites holding the memory are in the trace whatever comes next.
  if (!failure.empty()) write_sites_locked(/*symbolize=*/true);
}

void recorder::enable_stacks(std::unique_ptr<stacks::capturer> capturer) {
  std::lock_guard lock(mutex_);
  capturer_ = std::move(capturer);
}

// Writes what the capturer defined; with `symbolize`, first the native frames waiting for names
// (once per address). Called under the lock.
void recorder::write_sites_locked(bool symbolize) {
  if (!capturer_ || !sink_ || sink_failed_) return;
  if (symbolize || capturer_->pending() >= 4096) capturer_->symbolize_pending(sites_);
  if (sites_.stacks.empty() && sites_.frames.empty()) return;
  bool ok = false;
  try {
    ok = sink_->sites(sites_);
  } catch (const std::exception&) {
  }
  sites_.clear();
  if (!ok) sink_failed_locked(next_seq_);
}

void recorder::sink_failed_locked(std::uint64_t seq) {
  sink_failed_ = true;
  const std::string reason = sink_ != nullptr ? sink_->error() : std::string();
  trace_failure_ = "could not write to the trace file" +
                   (reason.empty() ? std::string() : " (" + reason + ")") +
                   "; the trace is incomplete after event " + std::to_string(seq);
  std::fprintf(stderr, "clpool_layer: error: %s\n", common::escape_text(trace_failure_).c_str());
  if (settings_.errors_path) append_to_errors_file(*settings_.errors_path, trace_failure_);
}

bool append_to_errors_file(const std::string& path, const std::string& line) noexcept {
  // One line whatever the text holds: a newline in it would read as a second entry.
  const std::string entry = common::escape_text(line) + "\n";
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd >= 0) {
    char head[errors_file_header.size()];
    const ssize_t n = ::pread(fd, head, sizeof head, 0);
    if (n != static_cast<ssize_t>(sizeof head) ||
        std::string_view(head, sizeof head) != errors_file_header) {
      ::close(fd);  // not the harness's file: the program's own, or nothing of ours
      return false;
    }
  } else if (errno == ENOENT) {
    fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || !write_all(fd, errors_file_header)) {
      if (fd >= 0) ::close(fd);
      return false;
    }
  } else {
    return false;
  }
  const bool written = write_all(fd, entry);
  ::close(fd);
  return written;
}

}  // namespace clpool::layer
