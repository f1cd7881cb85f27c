#include "trace/trace_reader.h"

#include "trace/text_fields.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace clpool::trace {
namespace {

constexpr std::size_t buffer_bytes = std::size_t{1} << 20;
// A longer line is not an event: 9 numbers and words fit in about 200 bytes. The cap keeps a
// garbage file (one huge line) from growing the buffer without bound.

// Text, then a CR that does not end the chunk: old-Mac line ends (which no tool writes), as
// opposed to binary garbage, which has unprintable bytes before any CR.
bool looks_cr_only(const char* p, std::size_t n) {
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == '\r') return i > 0;
    if (c != '\t' && (c < 0x20 || c > 0x7e)) return false;
  }
  return false;
}

constexpr const char* cr_only_problem =
    "lines end in a bare CR (classic Mac line ends), not LF or CRLF; convert with tr '\\r' '\\n'";
}  // namespace

std::string known_versions() {
  std::string out;
  for (unsigned v = format_version; v <= latest_format_version; ++v) {
    out += std::to_string(v);
    out += v + 2 <= latest_format_version ? ", " : v + 1 == latest_format_version ? " and " : "";
  }
  return out;
}

trace_error::trace_error(std::string file, std::uint64_t line, std::string problem,
                         std::uint64_t events_read)
    // Line 0 is the file as a whole (it cannot be opened): no line to name.
    : std::runtime_error(file + (line == 0 ? "" : ":" + std::to_string(line)) + ": " + problem),
      file_(std::move(file)),
      line_(line),
      problem_(std::move(problem)),
      events_read_(events_read) {}

void trace_reader::file_closer::operator()(std::FILE* f) const noexcept {
  if (f != nullptr && f != stdin) std::fclose(f);
}

trace_reader::trace_reader(name_tag, std::string name, reader_options options)
    : name_(std::move(name)), options_(options) {}

trace_reader::trace_reader(const std::string& path, reader_options options)
    : trace_reader(name_tag{}, path == "-" ? std::string("<stdin>") : path, options) {
  if (path == "-") {
    if (options_.follow)
      throw trace_error(name_, 0, "cannot follow standard input: follow a file", 0);
    file_.reset(stdin);
  } else {
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_) throw trace_error(name_, 0, std::string("cannot open: ") + std::strerror(errno), 0);
    struct stat st {};
    if (::fstat(::fileno(file_.get()), &st) == 0 && S_ISREG(st.st_mode)) {
      total_bytes_ = static_cast<std::uint64_t>(st.st_size);
    } else if (options_.follow) {
      throw trace_error(name_, 0, "cannot follow it: not a regular file", 0);
    }
  }
  buffer_.resize(buffer_bytes);
  buffer_[0] = '\0';
  read_header();
  if (options_.follow && encoding_ == trace_encoding::binary) {
    throw trace_error(name_, 0,
                      "cannot follow a binary trace while it is written: only text traces", 0);
  }
}

trace_reader trace_reader::from_string(std::string text, std::string name, reader_options options) {
  trace_reader reader(name_tag{}, std::move(name), options);
  reader.total_bytes_ = text.size();
  reader.buffer_ = std::move(text);
  reader.end_ = reader.buffer_.size();
  reader.eof_ = true;
  reader.read_header();
  return reader;
}

trace_reader::trace_reader(trace_reader&&) noexcept = default;
trace_reader& trace_reader::operator=(trace_reader&&) noexcept = default;
trace_reader::~trace_reader() = default;

void trace_reader::fail(std::string problem) {
  error_ = std::make_unique<trace_error>(name_, line_, std::move(problem), events_read_);
  throw *error_;
}

trace_error trace_reader::error_at_last_event(std::string problem) const {
  return trace_error(name_, event_line_, std::move(problem),
                     events_read_ == 0 ? 0 : events_read_ - 1);
}

bool trace_reader::refill() {
  if (eof_ || !file_) {
    eof_ = true;
    return false;
  }
  // Keep the unread tail (a partial line) and fill the rest of the buffer after it.
  const std::size_t tail = end_ - pos_;
  if (pos_ != 0) std::memmove(buffer_.data(), buffer_.data() + pos_, tail);
  consumed_base_ += pos_;
  pos_ = 0;
  end_ = tail;
  // The last byte stays free for the NUL sentinel parse_fast() relies on.
  std::size_t want = buffer_.size() - 1 - end_;
  std::size_t n;
  if (options_.follow) {
    // Following, most looks find a few new lines before the zero-filled rest of a mapped chunk:
    // read little first, more while the reads come back full; with pread() at the offset, so
    // that a look costs one system call and no stdio seek.
    want = std::min(want, follow_read_);
    follow_read_ = std::min<std::size_t>(follow_read_ * 4, buffer_.size());
    const ssize_t got = ::pread(::fileno(file_.get()), buffer_.data() + end_, want,
                                static_cast<off_t>(consumed_base_ + end_));
    if (got < 0) {
      ++line_;
      fail(std::string("read error: ") + std::strerror(errno));
    }
    n = static_cast<std::size_t>(got);
  } else {
    n = std::fread(buffer_.data() + end_, 1, want, file_.get());
  }
  end_ += n;
  buffer_[end_] = '\0';
  if (n == 0) {
    if (!options_.follow && std::ferror(file_.get())) {
      ++line_;
      fail(std::string("read error: ") + std::strerror(errno));
    }
    eof_ = true;
    return false;
  }
  return true;
}

bool trace_reader::next_line(const char*& begin, const char*& end) {
  for (;;) {
    const char* start = buffer_.data() + pos_;
    const std::size_t avail = end_ - pos_;
    const void* nl = std::memchr(start, '\n', avail);
    if (nl != nullptr) {
      const char* stop = static_cast<const char*>(nl);
      // Follow mode: a NUL before the newline is a line not yet written (a later writer's bytes
      // beyond a gap): wait for it rather than read garbage.
      if (options_.follow &&
          std::memchr(start, '\0', static_cast<std::size_t>(stop - start)) != nullptr) {
        return pause_at(start);
      }
      if (static_cast<std::size_t>(stop - start) > max_line_bytes) {
        ++line_;
        if (looks_cr_only(start, static_cast<std::size_t>(stop - start))) fail(cr_only_problem);
        fail("line is longer than " + std::to_string(max_line_bytes) +
             " bytes: not a trace event (binary or corrupt data?)");
      }
      begin = start;
      end = stop;
      if (end > begin && end[-1] == '\r') --end;  // tolerate CRLF line ends
      pos_ = static_cast<std::size_t>(stop - buffer_.data()) + 1;
      ++line_;
      return true;
    }
    if (options_.follow && std::memchr(start, '\0', avail) != nullptr) return pause_at(start);
    if (!options_.follow && at_zero_tail(start, avail)) return false;
    const bool cr_only = looks_cr_only(start, avail);
    if (avail > max_line_bytes) {
      ++line_;
      if (cr_only) fail(cr_only_problem);
      fail("line is longer than " + std::to_string(max_line_bytes) +
           " bytes: not a trace event (binary or corrupt data?)");
    }
    if (eof_ || !refill()) {
      if (options_.follow) return pause_at(buffer_.data() + pos_);
      if (pos_ == end_) return false;
      ++line_;
      if (cr_only) fail(cr_only_problem);
      fail("truncated: the last line " + quote(std::string_view(start, avail)) +
           " has no newline (the trace was cut off while being written?)");
    }
  }
}

// FORMAT.md: a text trace may end in NUL bytes, the unwritten rest of the last chunk of a
// recorder that writes through a memory map of the file and was killed (the OpenCL layer). Called
// where no newline ends the bytes at `start`; consumes a zero-filled tail: true when it began at a
// line start (the clean end of the trace), a truncated-line error when a cut-off line precedes it,
// and false (nothing consumed) when the bytes are not followed by zeros alone.
bool trace_reader::at_zero_tail(const char* start, std::size_t avail) {
  const char* nul = static_cast<const char*>(std::memchr(start, '\0', avail));
  if (nul == nullptr) return false;
  const char* const stop = start + avail;
  for (const char* p = nul; p < stop; ++p) {
    if (*p != '\0') return false;
  }
  const std::string cut_off(start, nul);
  const std::uint64_t tail_at = consumed_base_ + static_cast<std::size_t>(nul - buffer_.data());
  pos_ = end_;
  while (refill()) {
    for (std::size_t i = 0; i < end_; ++i) {
      if (buffer_[i] != '\0') {
        ++line_;
        fail("NUL bytes at byte " + std::to_string(tail_at) +
             " are followed by more data: a zero-filled tail ends a trace, nothing follows it");
      }
    }
    pos_ = end_;
    // A recorder leaves less than one of its chunks unwritten; more is not such a tail, and an
    // endless one (a device of zeros) must not be read forever.
    if (consumed_base_ + end_ - tail_at > max_zero_tail_bytes) {
      ++line_;
      fail("more than " + std::to_string(max_zero_tail_bytes >> 20) +
           " MiB of NUL bytes from byte " + std::to_string(tail_at) +
           ": not the unwritten tail of a killed recorder (FORMAT.md)");
    }
  }
  if (cut_off.empty()) return zero_tail_ = true;
  ++line_;
  fail("truncated: the last line " + quote(cut_off) +
       " has no newline (the trace was cut off while being written?)");
}

void trace_reader::read_header() {
  if (read_binary_header()) return;
  // What the first bytes say before a line is looked for: a file of NULs (/dev/zero, a
  // preallocated file never written) would otherwise be read to its end as a "zero tail".
  const std::string_view head(buffer_.data() + pos_, end_ - pos_);
  if (!head.empty() && head[0] == '\0') {
    line_ = 1;
    fail("not a clpool trace: it starts with NUL bytes (byte 0), not 'clpool-trace " +
         std::to_string(format_version) + "' (a file of zeros, or one never written?)");
  }
  if (head.substr(0, 3) == "\xEF\xBB\xBF") {
    line_ = 1;
    fail(
        "starts with a UTF-8 byte-order mark (bytes EF BB BF) before its header; a clpool trace "
        "starts "
        "with 'clpool-trace': remove the mark (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)");
  }
  const char* begin;
  const char* end;
  if (!next_line(begin, end)) {
    line_ = 1;
    fail("empty: no header (a clpool trace starts with 'clpool-trace " +
         std::to_string(format_version) + "')");
  }
  const std::string_view line(begin, static_cast<std::size_t>(end - begin));
  constexpr std::string_view magic = "clpool-trace";
  std::size_t p = magic.size();
  if (line.substr(0, magic.size()) != magic || p >= line.size() || !is_blank(line[p])) {
    fail("not a clpool trace: the first line is " + quote(line) + ", expected 'clpool-trace " +
         std::to_string(format_version) + "'");
  }
  while (p < line.size() && is_blank(line[p])) ++p;
  std::size_t q = line.size();
  while (q > p && is_blank(line[q - 1])) --q;
  const std::string_view version = line.substr(p, q - p);
  std::uint64_t v = 0;
  if (parse_decimal(version, v) != number_status::ok || v < format_version ||
      v > latest_format_version) {
    fail("unknown trace version " + quote(version) + " (this reader knows versions " +
         known_versions() + ")");
  }
  version_ = static_cast<unsigned>(v);
}

void trace_reader::note_comment(const char* begin, const char* end) {
  if (metadata_.size() >= max_metadata_kept && !options_.on_comment) return;
  std::string_view s(begin + 1, static_cast<std::size_t>(end - begin - 1));
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return;
  const std::string_view key = s.substr(0, colon);
  for (const char c : key) {
    if (is_blank(c)) return;  // prose, not "key: value"
  }
  std::string_view value = s.substr(colon + 1);
  while (!value.empty() && is_blank(value.front())) value.remove_prefix(1);
  while (!value.empty() && is_blank(value.back())) value.remove_suffix(1);
  if (options_.on_comment) options_.on_comment(key, value);
  if (metadata_.size() < max_metadata_kept)
    metadata_.emplace_back(std::string(key), std::string(value));
}

bool trace_reader::next(trace_event& out) {
  if (error_) throw *error_;
  if (paused_) resume();
  if (encoding_ == trace_encoding::binary) {
    if (!next_binary(out)) return false;
    event_line_ = line_;
    ++events_read_;
    return true;
  }
  // Fast path: a well-formed event line, parsed in one pass straight from the buffer. The buffer
  // must hold the whole line, so top it up when less than a maximal line is left.
  if (end_ - pos_ <= max_line_bytes && !eof_) refill();
  if (parse_fast(out)) {
    event_line_ = line_;
    ++events_read_;
    return true;
  }
  // Anything else (comments, blank lines, errors, rare spellings) takes the careful path.
  const char* begin;
  const char* end;
  for (;;) {
    if (!next_line(begin, end)) return false;
    while (begin < end && is_blank(*begin)) ++begin;
    if (begin == end) continue;  // blank line
    if (*begin == '#') {
      note_comment(begin, end);
      continue;
    }
    if (version_ >= sites_format_version && (*begin == 'f' || *begin == 's')) {
      const std::string problem =
          parse_site_line(std::string_view(begin, static_cast<std::size_t>(end - begin)), sites_);
      if (!problem.empty()) fail(problem);
      continue;
    }
    parse_event(begin, end, out);
    event_line_ = line_;
    ++events_read_;
    return true;
  }
}

namespace {
read_result drain(trace_reader& reader) {
  read_result result;
  try {
    trace_event e;
    while (reader.next(e)) result.events.push_back(e);
  } catch (const trace_error& error) {
    result.error = error;
  }
  result.version = reader.version();
  result.metadata = reader.metadata();
  result.sites = reader.sites();
  return result;
}
}  // namespace

read_result read_all(const std::string& path, reader_options options) {
  try {
    trace_reader reader(path, options);
    return drain(reader);
  } catch (const trace_error& error) {
    read_result result;
    result.error = error;
    return result;
  }
}

read_result read_all_from_string(std::string text, std::string name, reader_options options) {
  try {
    trace_reader reader = trace_reader::from_string(std::move(text), std::move(name), options);
    return drain(reader);
  } catch (const trace_error& error) {
    read_result result;
    result.error = error;
    return result;
  }
}

}  // namespace clpool::trace
