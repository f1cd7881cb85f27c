#include "tools/trace/trace_writer.h"

#include <charconv>
#include <stdexcept>

namespace clpool::trace {
namespace {

constexpr std::size_t flush_at = 60 * 1024;

void append_u64(std::string& out, std::uint64_t v) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, r.ptr);
}

void append_hex(std::string& out, std::uint64_t v) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, v, 16);
  out.append("0x");
  out.append(digits, r.ptr);
}

}  // namespace

trace_writer::trace_writer(std::ostream& out) : out_(&out), name_("<stream>") {
  buffer_.reserve(flush_at + 256);
  buffer_ = "clpool-trace " + std::to_string(format_version) + "\n";
}

trace_writer::trace_writer(const std::string& path)
    : owned_(std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc)),
      out_(owned_.get()),
      name_(path) {
  if (!*owned_) throw std::runtime_error("trace_writer: cannot create " + path);
  buffer_.reserve(flush_at + 256);
  buffer_ = "clpool-trace " + std::to_string(format_version) + "\n";
}

trace_writer::~trace_writer() {
  out_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_->flush();
}

void trace_writer::comment(std::string_view key, std::string_view value) {
  if (key.empty() || key.find_first_of(" \t:\r\n") != std::string_view::npos ||
      value.find_first_of("\r\n") != std::string_view::npos) {
    throw std::invalid_argument("trace_writer::comment: the key must be one word without ':' and "
                                "neither may contain a newline");
  }
  buffer_.append("# ").append(key).append(": ").append(value).push_back('\n');
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
  have_seq_ = true;
  last_seq_ = e.seq;
  ++events_;
  append_u64(buffer_, e.seq);
  buffer_.push_back(' ');
  append_u64(buffer_, e.time_ns);
  buffer_.push_back(' ');
  append_u64(buffer_, e.thread);
  buffer_.push_back(' ');
  append_u64(buffer_, e.queue);
  buffer_.push_back(' ');
  buffer_.append(to_string(e.action));
  buffer_.push_back(' ');
  append_u64(buffer_, e.id);
  buffer_.push_back(' ');
  append_u64(buffer_, e.size);
  buffer_.push_back(' ');
  buffer_.append(to_string(e.kind));
  buffer_.push_back(' ');
  append_hex(buffer_, e.flags);
  buffer_.push_back('\n');
  if (buffer_.size() >= flush_at) flush_buffer();
}

void trace_writer::flush_buffer() {
  out_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
  if (!*out_) throw std::runtime_error("trace_writer: write to " + name_ + " failed");
}

void trace_writer::flush() {
  flush_buffer();
  out_->flush();
  if (!*out_) throw std::runtime_error("trace_writer: flush of " + name_ + " failed");
}

}  // namespace clpool::trace
