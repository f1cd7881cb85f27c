// One event of a clpool trace (FORMAT.md, version 1) and the names of its words.
//
// This header and the reader/writer beside it depend on nothing but the standard library, so the
// OpenCL layer, the pool recorder and the replay tool can all link them.
#ifndef CLPOOL_TRACE_TRACE_EVENT_H_
#define CLPOOL_TRACE_TRACE_EVENT_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace clpool::trace {

// The format version written by default (no allocation sites), the version with sites
// (FORMAT.md, "Sites"): frame and stack tables and a stack id on alloc and alloc_failed, and the
// version with both moments of a free (FORMAT.md, "Two moments of a free"): the actions release
// and wait, sites allowed. Readers accept all three; a writer writes version 2 or 3 only when
// asked to, so traces without sites or releases stay readable by older readers.
inline constexpr unsigned format_version = 1;
inline constexpr unsigned sites_format_version = 2;
inline constexpr unsigned release_format_version = 3;
// Version 4 (FORMAT.md, "First uses"): version 3 plus the action use, a block's first use by a
// command, which a device that commits at first use charges there.
inline constexpr unsigned first_use_format_version = 4;
inline constexpr unsigned latest_format_version = first_use_format_version;

// The largest `size` a reader accepts (2^62): no device is that large, so anything above is
// corrupt input.
inline constexpr std::uint64_t max_event_size = std::uint64_t{1} << 62;

// The longest line (text trace) or row (RMM CSV) a reader accepts, in bytes: any real one is far
// shorter, and a longer one is refused at once rather than read into memory.
inline constexpr std::size_t max_line_bytes = 4096;
// The most NUL bytes a text trace may end in (FORMAT.md): a recorder writing through a memory map
// leaves less than one chunk (the layer's: 1 MiB) unwritten.
inline constexpr std::uint64_t max_zero_tail_bytes = std::uint64_t{16} << 20;

// The two encodings of version 1 (FORMAT.md): one event per text line, or the compact binary form
// (varint records, about 5x smaller and several times faster to read). Readers accept both.
enum class trace_encoding : std::uint8_t { text, binary };

// The first 8 bytes of a binary trace; the text form starts with "clpool-trace".
inline constexpr char binary_magic[8] = {'C', 'L', 'P', 'T', 'R', 'A', 'C', 'E'};

// What happened (FORMAT.md, "Actions").
enum class trace_action : std::uint8_t {
  alloc,         // block `id` of `size` bytes was allocated
  alloc_failed,  // a request of `size` bytes got out-of-memory in the recorded run
  free,          // block `id` was released
  free_held,     // the program told its pool to free held memory
  stop_holding,  // the program told its pool to stop holding
  // Version 3 (FORMAT.md, "Two moments of a free"):
  release,  // the program released block `id`; its memory is given back at its later `free`
  wait,     // the program waited for queued commands (clFinish, clWaitForEvents, a blocking call)
  // Version 4 (FORMAT.md, "First uses"):
  use,  // a command used block `id` while the device had not committed it: it commits it here
};

// What kind of memory (FORMAT.md, field `kind`).
enum class trace_kind : std::uint8_t {
  buffer,  // cl_mem buffer
  svm,     // clSVMAlloc
  host,    // host-pinned / CL_MEM_ALLOC_HOST_PTR
  sub,     // sub-buffer: names a region of another block, no new device memory
};

// Whether a block of `kind` takes device memory of its own: buffers and SVM blocks do; a host
// block takes host (pinned) memory, and a sub-buffer is a view of another block. The one rule for
// the layer's budget and count at exit, the summaries, the diff, the plugin and the sweep.
constexpr bool takes_device_memory(trace_kind kind) {
  return kind == trace_kind::buffer || kind == trace_kind::svm;
}

// One line of a trace. Plain data; every field is written and read exactly.
struct trace_event {
  std::uint64_t seq = 0;      // strictly increasing through a file
  std::uint64_t time_ns = 0;  // since the trace started; informational
  std::uint64_t thread = 0;   // small id of the recording thread
  std::uint64_t queue = 0;    // command queue / stream id; 0 = none
  trace_action action = trace_action::alloc;
  std::uint64_t id = 0;    // handle id, unique among live blocks
  std::uint64_t size = 0;  // requested bytes (free: block size or 0)
  trace_kind kind = trace_kind::buffer;
  std::uint64_t flags = 0;  // OpenCL mem / SVM flags
  std::uint64_t stack = 0;  // allocation site (version 2, alloc / alloc_failed / use); 0 = unknown

  friend bool operator==(const trace_event&, const trace_event&) = default;
};

// The word written for `action` / `kind`, e.g. "alloc_failed", "svm".
std::string_view to_string(trace_action action);
std::string_view to_string(trace_kind kind);

// Whether a `# first_uses:` comment's value (FORMAT.md "First uses": kinds, blank-separated by
// spaces or tabs; unknown words ignored) names `kind`. The one reading of that comment.
bool first_uses_names(std::string_view kinds, trace_kind kind);

// The block id a layer's `# failure:` comment names when it is a refused first use ("first use of
// id 7 (1048576 bytes) by CALL: ...", FORMAT.md "First uses"); nothing for any other failure. The
// one reading of that comment (trace_summary, the replay's recorded failure).
std::optional<std::uint64_t> first_use_failure_id(std::string_view failure);

// What a recorder's `# failure:` comment after an alloc_failed says ("seq 9 status -61
// (CL_INVALID_BUFFER_SIZE) from the layer: ...", FORMAT.md "Actions"): the seq of that event and
// the status the program got (decimal integers, each followed by a space or the end). Nothing for
// any other comment (a refused first use, words without a status). The one reading of that comment
// (the replay, trace_summary, the pytest plugin's session).
struct alloc_failure {
  std::uint64_t seq = 0;
  std::int32_t status = 0;
};
std::optional<alloc_failure> alloc_failure_of(std::string_view failure);

// Whether `failure`, the first failure comment after `event`, says that event is an alloc_failed
// refused for its size (it names the event's seq, and CL_INVALID_BUFFER_SIZE for a non-empty
// request, above CL_DEVICE_MAX_MEM_ALLOC_SIZE: common/cl_status.h) rather than for lack of
// memory: no memory was involved, and no capacity would have changed it. The one rule of the
// replay, trace_summary and the pytest plugin's session.
bool is_size_refusal(const trace_event& event, std::string_view failure);

// The action / kind spelled `word`, or nothing when `word` is not one.
std::optional<trace_action> parse_action(std::string_view word);
std::optional<trace_kind> parse_kind(std::string_view word);

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_TRACE_EVENT_H_
