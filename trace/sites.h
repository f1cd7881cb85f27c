// Allocation sites in a trace (FORMAT.md, "Sites", version 2): interned frames and stacks.
//
// A frame is one code location (a Python function at a line, or a native function in a module);
// a stack is a frame plus the stack of its caller (its parent), so a stack id names a whole call
// chain and a deep chain shared by many allocations is stored once. Events name their stack by id.
//
// Frames may be defined after the stacks that use them: the OpenCL layer symbolizes native
// addresses lazily (at flush or exit), never while the program allocates. A stack, by contrast,
// is defined before the first event that names it, and its parent before it, so a reader can
// attribute every event as it streams and the chain has no cycles.
#ifndef CLPOOL_TOOLS_TRACE_SITES_H_
#define CLPOOL_TOOLS_TRACE_SITES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace clpool::trace {

// The most frames or stacks one trace may define: far above any real program, and it bounds a
// reader's memory on hostile input.
inline constexpr std::size_t max_site_entries = std::size_t{1} << 22;
// The longest file or function name in a frame, in bytes (after unescaping): escaped (3 bytes
// per byte at worst), two names still fit in one text line (max_line_bytes).
inline constexpr std::size_t max_frame_text = 600;

enum class frame_lang : std::uint8_t { python, native };

struct frame_info {
  frame_lang lang = frame_lang::python;
  std::uint64_t line = 0;  // source line; 0 when unknown (a native frame without debug info)
  std::string file;        // Python: the source file. Native: the module (or source file)
  std::string function;    // Python: the function. Native: the symbol, or "0x<offset>"

  friend bool operator==(const frame_info&, const frame_info&) = default;
};

std::string_view to_string(frame_lang lang);  // "py" or "native"
std::optional<frame_lang> parse_frame_lang(std::string_view word);

// Text fields are percent-encoded so that a name with blanks stays one field: '%', bytes up to
// ' ', 0x7f and '#' become %XX; an empty name is written "%". escape_field never fails;
// unescape_field returns false on a malformed escape.
std::string escape_field(std::string_view text);
// `why`, when given, says which: "bad %-escape '%4' at byte 3" or "longer than 600 bytes (700)".
bool unescape_field(std::string_view field, std::string& out, std::string* why = nullptr);

class site_table;

// Parses a text site line (`frame ...` or `stack ...`, FORMAT.md "Sites") into `table`. Returns
// an error message, empty on success.
std::string parse_site_line(std::string_view line, site_table& table);
// Parses the body of a binary frame (tag 5) or stack (tag 6) record at `p` (just after the tag),
// reading no byte at or after `end`. Advances `p`; returns an error message, empty on success.
std::string parse_binary_site(unsigned tag, const unsigned char*& p, const unsigned char* end,
                              site_table& table);
// Appends the text line / binary record defining a frame or a stack.
void append_frame_text(std::string& out, std::uint64_t id, const frame_info& frame);
void append_stack_text(std::string& out, std::uint64_t id, std::uint64_t parent,
                       std::uint64_t frame);
void append_frame_binary(std::string& out, std::uint64_t id, const frame_info& frame);
void append_stack_binary(std::string& out, std::uint64_t id, std::uint64_t parent,
                         std::uint64_t frame);
void append_varint(std::string& out, std::uint64_t v);

class site_table {
 public:
  // Adds frame `id` (> 0). Returns an error message, or empty on success (a duplicate id, id 0,
  // too many entries).
  std::string add_frame(std::uint64_t id, frame_info frame);
  // Adds stack `id` (> 0) = `frame` called from stack `parent` (0: the outermost frame). The
  // parent must already be defined; the frame need not be (see above).
  std::string add_stack(std::uint64_t id, std::uint64_t parent, std::uint64_t frame);

  bool has_stack(std::uint64_t id) const { return id == 0 || stacks_.count(id) != 0; }
  const frame_info* find_frame(std::uint64_t id) const;
  // The frame ids of stack `id`, innermost first; empty for 0 or an unknown id.
  std::vector<std::uint64_t> frames_of(std::uint64_t stack) const;
  bool empty() const { return frames_.empty() && stacks_.empty(); }
  std::size_t frame_count() const { return frames_.size(); }
  std::size_t stack_count() const { return stacks_.size(); }

  // "function (file:line)", or "? (frame N not defined)" for a frame the trace never defined
  // (a recorder killed before it symbolized).
  std::string describe_frame(std::uint64_t frame) const;

  // Every frame and stack, in ascending id order, for writers that copy a table.
  std::vector<std::pair<std::uint64_t, const frame_info*>> all_frames() const;
  struct stack_entry {
    std::uint64_t parent;
    std::uint64_t frame;
  };
  // Stacks in definition order (so each parent precedes its children).
  const std::vector<std::pair<std::uint64_t, stack_entry>>& stacks_in_order() const {
    return order_;
  }

  // The user's patterns of library frames, which never name a site (trace/library_frames.h);
  // not part of the trace.
  void set_library_patterns(std::vector<std::string> patterns) {
    library_patterns_ = std::move(patterns);
  }
  const std::vector<std::string>& library_patterns() const { return library_patterns_; }
  // How many of a stack's innermost program frames make its site (clpool_replay --site-frames;
  // 1: the innermost alone); not part of the trace.
  void set_site_frames(std::size_t frames) { site_frames_ = frames == 0 ? 1 : frames; }
  std::size_t site_frames() const { return site_frames_; }

 private:
  std::unordered_map<std::uint64_t, frame_info> frames_;
  std::unordered_map<std::uint64_t, stack_entry> stacks_;
  std::vector<std::pair<std::uint64_t, stack_entry>> order_;
  std::vector<std::string> library_patterns_;
  std::size_t site_frames_ = 1;
};

}  // namespace clpool::trace

#endif  // CLPOOL_TOOLS_TRACE_SITES_H_
