#include "trace/trace_writer.h"

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace clpool::trace {
namespace {

constexpr std::size_t flush_at = 60 * 1024;

}  // namespace

trace_writer::trace_writer(std::ostream& out, trace_encoding encoding, unsigned version)
    : out_(&out), name_("<stream>"), encoding_(encoding), version_(version) {
  write_header();
}

trace_writer::trace_writer(const std::string& path, trace_encoding encoding,
                           const std::string& what, unsigned version)
    : owned_(std::make_unique<common::atomic_output_file>(path, what)),
      out_(&owned_->stream()),
      name_(path),
      encoding_(encoding),
      version_(version) {
  write_header();
}

void trace_writer::commit() {
  flush();
  if (owned_) owned_->commit();
}

void trace_writer::write_header() {
  if (version_ < format_version || version_ > latest_format_version) {
    throw std::invalid_argument("trace_writer: unknown version " + std::to_string(version_));
  }
  buffer_.reserve(flush_at + 256);
  if (encoding_ == trace_encoding::text) {
    buffer_ = "clpool-trace " + std::to_string(version_) + "\n";
  } else {
    buffer_.assign(binary_magic, sizeof binary_magic);
    buffer_.push_back(static_cast<char>(version_));
    buffer_.append(7, '\0');
  }
}

void trace_writer::write_binary(const trace_event& e) {
  const bool first = events_ == 1;  // already counted
  const bool has_flags = e.flags != 0;
  // A release, wait or use record always carries thread and queue (bit 6), so that its tag byte
  // is never exactly 5, 6 or 7, a frame's, a stack's or metadata's (FORMAT.md).
  const bool has_tq = first || e.thread != last_thread_ || e.queue != last_queue_ ||
                      e.action == trace_action::release || e.action == trace_action::wait ||
                      e.action == trace_action::use;
  const unsigned tag = static_cast<unsigned>(e.action) | static_cast<unsigned>(e.kind) << 3 |
                       (has_flags ? 0x20u : 0u) | (has_tq ? 0x40u : 0u) |
                       (e.stack != 0 ? 0x80u : 0u);
  buffer_.push_back(static_cast<char>(tag));
  // seq: absolute in the first record, then the gap minus one (seq strictly increases).
  append_varint(buffer_, first ? e.seq : e.seq - prev_seq_ - 1);
  // time: zigzag of the signed difference (time may step back between threads).
  const std::uint64_t d = e.time_ns - last_time_;
  append_varint(buffer_, (d << 1) ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(d) >> 63));
  if (has_tq) {
    append_varint(buffer_, e.thread);
    append_varint(buffer_, e.queue);
  }
  append_varint(buffer_, e.id);
  append_varint(buffer_, e.size);
  if (has_flags) append_varint(buffer_, e.flags);
  if (e.stack != 0) append_varint(buffer_, e.stack);
  last_time_ = e.time_ns;
  last_thread_ = e.thread;
  last_queue_ = e.queue;
}

trace_writer::~trace_writer() {
  if (owned_) return;  // uncommitted: owned_ removes the temporary file
  out_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_->flush();
}

void trace_writer::comment(std::string_view key, std::string_view value) {
  if (key.empty() || key.find_first_of(" \t:\r\n") != std::string_view::npos ||
      value.find_first_of("\r\n") != std::string_view::npos) {
    throw std::invalid_argument(
        "trace_writer::comment: the key must be one word without ':' and "
        "neither may contain a newline");
  }
  if (encoding_ == trace_encoding::binary) {
    if (key.size() > 1024 || value.size() > 1024) {
      throw std::invalid_argument("trace_writer::comment: key and value are limited to 1024 bytes");
    }
    buffer_.push_back(static_cast<char>(7));  // tag 7: a metadata record
    append_varint(buffer_, key.size());
    buffer_.append(key);
    append_varint(buffer_, value.size());
    buffer_.append(value);
  } else {
    buffer_.append("# ").append(key).append(": ").append(value).push_back('\n');
  }
  if (buffer_.size() >= flush_at) flush_buffer();
}

void trace_writer::write(const trace_event& e) {
  if (have_seq_ && e.seq <= last_seq_) {
    throw std::invalid_argument("trace_writer::write: seq " + std::to_string(e.seq) +
                                " does not follow " + std::to_string(last_seq_));
  }
  if (e.size > max_event_size) {
    throw std::invalid_argument("trace_writer::write: size " + std::to_string(e.size) +
                                " is above 2^62");
  }
  if (e.stack != 0 && (version_ < sites_format_version ||
                       (e.action != trace_action::alloc && e.action != trace_action::alloc_failed &&
                        e.action != trace_action::use))) {
    throw std::invalid_argument(
        "trace_writer::write: a stack id needs a version-2 to -4 writer "
        "and an alloc, alloc_failed or use event");
  }
  if (e.action == trace_action::use && version_ < first_use_format_version) {
    throw std::invalid_argument("trace_writer::write: a use event needs a version-4 writer");
  }
  if ((e.action == trace_action::release || e.action == trace_action::wait) &&
      version_ < release_format_version) {
    throw std::invalid_argument("trace_writer::write: a " + std::string(to_string(e.action)) +
                                " event needs a version-3 writer");
  }
  prev_seq_ = last_seq_;
  have_seq_ = true;
  last_seq_ = e.seq;
  ++events_;
  if (encoding_ == trace_encoding::binary) {
    write_binary(e);
    if (buffer_.size() >= flush_at) flush_buffer();
    return;
  }
  // Formatted into a local array and appended once: appending field by field to the string cost
  // as much as the OpenCL layer's whole recording budget (tools/layer/README.md, "Cost").
  char line[9 * 24 + 2 * 16];  // 7 numbers and a 0x-hex number (each <= 20 digits), 2 words, blanks
  char* p = line;
  const auto number = [&p, &line](std::uint64_t v, int base = 10) {
    p = std::to_chars(p, line + sizeof line, v, base).ptr;
    *p++ = ' ';
  };
  const auto word = [&p](std::string_view w) {
    p = std::copy(w.begin(), w.end(), p);
    *p++ = ' ';
  };
  number(e.seq);
  number(e.time_ns);
  number(e.thread);
  number(e.queue);
  word(to_string(e.action));
  number(e.id);
  number(e.size);
  word(to_string(e.kind));
  *p++ = '0';
  *p++ = 'x';
  number(e.flags, 16);
  if (e.stack != 0) number(e.stack);
  p[-1] = '\n';
  buffer_.append(line, p);
  if (buffer_.size() >= flush_at) flush_buffer();
}

void trace_writer::write_frame(std::uint64_t id, const frame_info& frame) {
  if (version_ < sites_format_version)
    throw std::logic_error("trace_writer: frames need version 2 to 4");
  if (encoding_ == trace_encoding::binary)
    append_frame_binary(buffer_, id, frame);
  else
    append_frame_text(buffer_, id, frame);
  if (buffer_.size() >= flush_at) flush_buffer();
}

void trace_writer::write_stack(std::uint64_t id, std::uint64_t parent, std::uint64_t frame) {
  if (version_ < sites_format_version)
    throw std::logic_error("trace_writer: stacks need version 2 to 4");
  if (encoding_ == trace_encoding::binary)
    append_stack_binary(buffer_, id, parent, frame);
  else
    append_stack_text(buffer_, id, parent, frame);
  if (buffer_.size() >= flush_at) flush_buffer();
}

namespace {
// The OS's reason a stream write just failed, when the stream's buffer left one in errno.
std::string os_reason(int err) {
  return err != 0 ? std::string(": ") + std::strerror(err) : std::string();
}
}  // namespace

void trace_writer::flush_buffer() {
  errno = 0;
  out_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
  if (!*out_) {
    const int err = errno;
    if (owned_) owned_->commit();  // throws the file's error: its flag, path and the OS's reason
    throw std::runtime_error("trace_writer: write to " + name_ + " failed" + os_reason(err));
  }
}

void trace_writer::flush() {
  flush_buffer();
  errno = 0;
  out_->flush();
  if (!*out_) {
    const int err = errno;
    if (owned_) owned_->commit();
    throw std::runtime_error("trace_writer: flush of " + name_ + " failed" + os_reason(err));
  }
}

}  // namespace clpool::trace
