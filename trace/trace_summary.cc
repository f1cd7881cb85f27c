// What trace_summary and `clpool record` print about a trace: read with the strict reader, one
// `key: value` per line, so scripts and tests can check a recorded trace:
//
//   events: 12
//   alloc: 5            (likewise alloc_failed, free, free_held, stop_holding)
//   alloc.buffer: 3     (allocations by kind: buffer, svm, host, sub)
//   peak_device_bytes: 3145728   (largest sum of live buffer + svm sizes)
//   peak_host_bytes: 536870912   (largest sum of live host blocks, ALLOC_HOST_PTR: only when there
//                                 are such blocks; they are in no device figure)
//   live_at_end: 0      (blocks never freed)
//   trace_end: cut off ... (only for a trace that ends in the zero-filled rest of the layer's
//                           file: its program was killed, crashed or called _exit)
//   first_alloc_failed: seq 9 size 1048576 kind buffer
//   size_refusals: 1    (alloc_failed refused for their size, CL_INVALID_BUFFER_SIZE, from the
//                        recorder's "failure" comments: trace::is_size_refusal; still among
//                        alloc_failed, and first_alloc_failed may be one)
//   first_use_failed: 1 (first uses the device refused, from the layer's "failure" comments, all
//                        of them: read as they come, not from the reader's first 256 comments)
//   first_first_use_failed: id 7 (1048576 bytes) by clEnqueueWriteBuffer
//   release: 4, wait: 2 (version 3 only: FORMAT.md "Two moments of a free")
//   peak_device_bytes_at_release: 2097152 (version 3 only: the peak with each block counted free
//                                 from the program's release, not the driver's free)
//   use: 2, peak_device_bytes_at_first_use: 2684354560 (version 4 only: the peak with each block
//                                 of a kind its first_uses comment names counted from its first
//                                 use the device took (a refused one, its "failure" comment after
//                                 it, takes nothing), one never used not at all: FORMAT.md
//                                 "First uses")
//   meta.budget: 4294967296     (the trace's "# key: value" comments, except "failure")
#include "trace/trace_summary.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "common/text_escape.h"

#include "trace/trace_reader.h"

namespace clpool::trace {

namespace {

std::uint64_t device_size(const trace_event& a) { return takes_device_memory(a.kind) ? a.size : 0; }

// The sums, one event at a time. Memory is bounded by the live blocks, never by the trace's length.
struct summary {
  std::map<std::string, std::uint64_t> counts;
  std::unordered_map<std::uint64_t, trace_event> live;
  std::uint64_t device_bytes = 0, peak = 0, events = 0;
  std::uint64_t host_bytes = 0, peak_host = 0;  // live `host` (pinned) blocks
  bool cut_off = false;                         // trace_reader::ended_in_zero_tail
  // The same sum with each block counted free from the program's release (version 3).
  std::uint64_t held_by_program = 0, peak_program = 0;
  std::unordered_map<std::uint64_t, bool> released;  // live id -> the program released it
  std::optional<trace_event> first_failure;
  // The same sum with each block of a kind the trace records first uses of counted from its first
  // use (version 4): the kinds, the live blocks not yet used, the sum and its peak.
  bool buffers_at_use = false, svm_at_use = false;
  std::unordered_set<std::uint64_t> unused;  // live ids awaiting their first use
  std::uint64_t used_bytes = 0, peak_used = 0;
  // The last event, when it was a use that charged its block: a "failure" comment right after it
  // says the device refused it (the peak takes a use once the next event is read).
  std::optional<trace_event> last_use;
  // The refused first uses (the layer's "failure" comments), and the first of them.
  std::uint64_t first_use_failures = 0;
  std::string first_first_use_failure;

  // The last event, when it was an alloc_failed: its "failure" comment may call it a size refusal.
  std::optional<trace_event> last_failed;
  std::uint64_t size_refusals = 0;

  void on_comment(std::string_view key, std::string_view value) {
    if (key == "failure" && last_failed) {
      if (is_size_refusal(*last_failed, value)) ++size_refusals;
      last_failed.reset();
    }
    const std::optional<std::uint64_t> id =
        key == "failure" ? first_use_failure_id(value) : std::nullopt;
    if (!id) return;
    if (first_use_failures++ == 0) first_first_use_failure = value.substr(0, value.find(": "));
    if (last_use && *id == last_use->id) {
      used_bytes -= device_size(live[last_use->id]);  // refused: it took nothing, and awaits one
      unused.insert(last_use->id);
      last_use.reset();
    }
  }

  void set_first_uses(std::string_view kinds) {
    buffers_at_use = first_uses_names(kinds, trace_kind::buffer);
    svm_at_use = first_uses_names(kinds, trace_kind::svm);
  }
  bool at_use(trace_kind k) const {
    return (k == trace_kind::buffer && buffers_at_use) || (k == trace_kind::svm && svm_at_use);
  }
  void use_bytes(std::int64_t change) { used_bytes += static_cast<std::uint64_t>(change); }

  void add(const trace_event& e) {
    peak_used = std::max(peak_used, used_bytes);  // the previous event's, now that it stands
    last_use.reset();
    last_failed.reset();
    if (e.action == trace_action::alloc_failed) last_failed = e;
    ++events;
    ++counts[std::string(to_string(e.action))];
    if (e.action == trace_action::alloc) {
      ++counts["alloc." + std::string(to_string(e.kind))];
      live[e.id] = e;
      if (at_use(e.kind) && device_size(e) != 0) {
        unused.insert(e.id);
      } else {
        use_bytes(static_cast<std::int64_t>(device_size(e)));
      }
      device_bytes += device_size(e);
      if (e.kind == trace_kind::host) peak_host = std::max(peak_host, host_bytes += e.size);
      held_by_program += device_size(e);
      peak = std::max(peak, device_bytes);
      peak_program = std::max(peak_program, held_by_program);
    } else if (e.action == trace_action::release) {
      auto it = live.find(e.id);
      if (it != live.end() && !released[e.id]) {
        released[e.id] = true;
        held_by_program -= device_size(it->second);
      }
    } else if (e.action == trace_action::use) {
      if (unused.erase(e.id) != 0) {
        use_bytes(static_cast<std::int64_t>(device_size(live[e.id])));
        last_use = e;
      }
    } else if (e.action == trace_action::free) {
      auto it = live.find(e.id);
      if (it != live.end()) {
        if (unused.erase(e.id) == 0) use_bytes(-static_cast<std::int64_t>(device_size(it->second)));
        device_bytes -= device_size(it->second);
        if (it->second.kind == trace_kind::host) host_bytes -= it->second.size;
        if (!released[e.id]) held_by_program -= device_size(it->second);
        released.erase(e.id);
        live.erase(it);
      }
    } else if (e.action == trace_action::alloc_failed && !first_failure) {
      first_failure = e;
    }
  }

  void print(std::FILE* out, unsigned version, const trace_metadata& metadata) {
    peak_used = std::max(peak_used, used_bytes);
    std::fprintf(out, "events: %llu\n", static_cast<unsigned long long>(events));
    for (const char* action : {"alloc", "alloc_failed", "free", "free_held", "stop_holding"}) {
      std::fprintf(out, "%s: %llu\n", action, static_cast<unsigned long long>(counts[action]));
    }
    for (const char* kind : {"buffer", "svm", "host", "sub"}) {
      std::fprintf(out, "alloc.%s: %llu\n", kind,
                   static_cast<unsigned long long>(counts[std::string("alloc.") + kind]));
    }
    std::fprintf(out, "peak_device_bytes: %llu\n", static_cast<unsigned long long>(peak));
    if (version >= release_format_version) {
      for (const char* action : {"release", "wait"}) {
        std::fprintf(out, "%s: %llu\n", action, static_cast<unsigned long long>(counts[action]));
      }
      std::fprintf(out, "peak_device_bytes_at_release: %llu\n",
                   static_cast<unsigned long long>(peak_program));
    }
    if (version >= first_use_format_version) {
      std::fprintf(out, "use: %llu\n", static_cast<unsigned long long>(counts["use"]));
      std::fprintf(out, "peak_device_bytes_at_first_use: %llu\n",
                   static_cast<unsigned long long>(peak_used));
    }
    if (counts["alloc.host"] != 0) {
      std::fprintf(out, "peak_host_bytes: %llu\n", static_cast<unsigned long long>(peak_host));
    }
    std::fprintf(out, "live_at_end: %zu\n", live.size());
    if (cut_off) {
      std::fprintf(out,
                   "trace_end: cut off (it ends in the zero-filled rest of its recorder's file, "
                   "not at the program's normal exit: it was killed, crashed or called _exit)\n");
    }
    if (first_failure) {
      std::fprintf(out, "first_alloc_failed: seq %llu size %llu kind %s\n",
                   static_cast<unsigned long long>(first_failure->seq),
                   static_cast<unsigned long long>(first_failure->size),
                   std::string(to_string(first_failure->kind)).c_str());
    }
    // An alloc_failed refused for its size (CL_INVALID_BUFFER_SIZE) is no out-of-memory: its
    // "failure" comment says so ("seq 9 status -61 ..."; FORMAT.md "Actions").
    if (size_refusals != 0) {
      std::fprintf(out, "size_refusals: %llu\n", static_cast<unsigned long long>(size_refusals));
    }
    // A first use the device refused (the layer under a first-use profile) is no alloc_failed:
    // its "failure" comment says so ("first use of id 7 (1048576 bytes) by clEnqueue...: ...").
    if (first_use_failures != 0) {
      std::fprintf(out, "first_use_failed: %llu\n",
                   static_cast<unsigned long long>(first_use_failures));
      std::fprintf(
          out, "first_first_use_failed: %s\n",
          common::escape_text(first_first_use_failure.substr(std::size("first use of ") - 1))
              .c_str());
    }
    for (const auto& [key, value] : metadata) {
      // One "failure" comment follows every alloc_failed; first_alloc_failed stands for them.
      // The comments come from the trace: printed in their printable form (common/text_escape.h).
      if (key != "failure") {
        std::fprintf(out, "meta.%s: %s\n", common::escape_text(key).c_str(),
                     common::escape_text(value).c_str());
      }
    }
  }
};

}  // namespace

bool print_trace_summary(const std::string& path, std::FILE* out, std::FILE* err) {
  std::optional<trace_error> error;
  std::optional<trace_reader> reader;
  summary sum;
  try {
    reader.emplace(
        path, reader_options{.on_comment = [&sum](std::string_view key, std::string_view value) {
          sum.on_comment(key, value);
        }});
    trace_event e;
    for (bool first = true; reader->next(e); first = false) {
      // The header's comments are read with the first event: first_uses is one of them.
      if (first && reader->version() >= first_use_format_version) {
        for (const auto& [key, value] : reader->metadata()) {
          if (key == "first_uses") sum.set_first_uses(value);
        }
      }
      sum.add(e);
    }
    sum.cut_off = reader->ended_in_zero_tail();
  } catch (const trace_error& e) {
    error = e;
  }
  const trace_metadata no_metadata;
  sum.print(out, reader ? reader->version() : 0u, reader ? reader->metadata() : no_metadata);
  if (error) {
    std::fprintf(err, "trace_summary: %s\n", error->what());
    return false;
  }
  return true;
}

}  // namespace clpool::trace
