// The binary form of trace_reader (FORMAT.md, "Binary form"): its header and records. A separate
// file only to keep trace_reader.cc readable; the class is trace_reader.h's.
#include <cstring>
#include <string>

#include "trace/trace_reader.h"

namespace clpool::trace {

bool trace_reader::read_binary_header() {
  if (end_ - pos_ < 16 && !eof_) refill();
  if (end_ - pos_ < sizeof binary_magic ||
      std::memcmp(buffer_.data() + pos_, binary_magic, sizeof binary_magic) != 0) {
    return false;
  }
  encoding_ = trace_encoding::binary;
  line_ = 1;
  if (end_ - pos_ < 16) fail("truncated binary header (16 bytes expected)");
  const unsigned char* h = reinterpret_cast<const unsigned char*>(buffer_.data() + pos_);
  if (h[8] < format_version || h[8] > latest_format_version) {
    fail("unknown trace version '" + std::to_string(h[8]) +
         "' (binary form; this reader knows versions " + known_versions() + ")");
  }
  for (int i = 9; i < 16; ++i) {
    if (h[i] != 0) fail("corrupt binary header: reserved bytes are not zero");
  }
  version_ = h[8];
  pos_ += 16;
  return true;
}

namespace {

// Reads a LEB128 varint at p (at most 10 bytes). Returns the position after it, or nullptr when
// it is longer than 10 bytes or does not fit in 64 bits.
inline const unsigned char* read_varint(const unsigned char* p, std::uint64_t& v) {
  std::uint64_t x = *p & 0x7f;
  if (*p++ < 0x80) {
    v = x;
    return p;
  }
  for (unsigned shift = 7; shift < 70; shift += 7) {
    const std::uint64_t b = *p++;
    if (shift == 63 && b > 1) return nullptr;
    x |= (b & 0x7f) << shift;
    if (b < 0x80) {
      v = x;
      return p;
    }
  }
  return nullptr;
}

// The longest event record: tag, 8 varints of 10 bytes.
constexpr std::size_t max_record_bytes = 1 + 8 * 10;

}  // namespace

// Where a record is, for an error's message ("binary record N at byte B: ").
std::string trace_reader::binary_where(std::uint64_t record) const {
  return "binary record " + std::to_string(record) + " at byte " +
         std::to_string(consumed_base_ + pos_) + ": ";
}

// A metadata record at pos_: its tag, varint length, key, varint length, value.
void trace_reader::read_binary_metadata(std::uint64_t record) {
  const char* q = buffer_.data() + pos_ + 1;
  const char* const end = buffer_.data() + end_;
  const auto read_text = [&](std::string& text) {
    std::uint64_t n = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (q >= end || shift > 14) return false;  // lengths are at most 1024: two bytes
      const std::uint64_t b = static_cast<unsigned char>(*q++);
      n |= (b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    if (n > 1024 || static_cast<std::uint64_t>(end - q) < n) return false;
    text.assign(q, n);
    q += n;
    return true;
  };
  std::string key, value;
  if (!read_text(key) || !read_text(value))
    fail(binary_where(record) + "truncated or corrupt metadata record");
  if (options_.on_comment) options_.on_comment(key, value);
  if (metadata_.size() < max_metadata_kept)
    metadata_.emplace_back(std::move(key), std::move(value));
  pos_ = static_cast<std::size_t>(q - buffer_.data());
}

// A frame (tag 5) or stack (tag 6) record at pos_.
void trace_reader::read_binary_site(unsigned tag, std::uint64_t record) {
  const unsigned char* q = reinterpret_cast<const unsigned char*>(buffer_.data() + pos_ + 1);
  const std::string problem = parse_binary_site(
      tag, q, reinterpret_cast<const unsigned char*>(buffer_.data() + end_), sites_);
  if (!problem.empty()) fail(binary_where(record) + problem);
  pos_ = static_cast<std::size_t>(reinterpret_cast<const char*>(q) - buffer_.data());
}

// An event record's fields after its tag byte, read from p (valid up to limit) into e; returns
// the position after the record. The previous record's thread, queue and time are the base of
// this one's; they are updated by the caller once the event is checked. Inlined into next_binary,
// its one caller: the hot path of reading a binary trace (a call per record cost 2 % of a replay).
[[gnu::always_inline]] inline const unsigned char* trace_reader::decode_binary_event(
    unsigned tag, const unsigned char* p, const unsigned char* limit, std::uint64_t record,
    trace_event& e) {
  const bool has_stack = (tag & 0x80) != 0 && version_ >= sites_format_version;
  // Actions 5 (release) and 6 (wait) exist from version 3 on, 7 (use) from version 4; their
  // records always set bit 6, so that a tag byte of exactly 5, 6 or 7 stays a frame, stack or
  // metadata record.
  const unsigned last_action =
      static_cast<unsigned>(version_ >= first_use_format_version ? trace_action::use
                            : version_ >= release_format_version ? trace_action::wait
                                                                 : trace_action::stop_holding);
  if (((tag & 0x80) != 0 && !has_stack) || (tag & 7) > last_action) {
    fail(binary_where(record) + "bad record tag " + std::to_string(tag) +
         " (corrupt or not a clpool binary trace)");
  }
  e.action = static_cast<trace_action>(tag & 7);
  e.kind = static_cast<trace_kind>((tag >> 3) & 3);
  std::uint64_t seq = 0, dt = 0;
  bool ok = (p = read_varint(p, seq)) && (p = read_varint(p, dt));
  if (ok && (tag & 0x40)) ok = (p = read_varint(p, e.thread)) && (p = read_varint(p, e.queue));
  if (ok && !(tag & 0x40)) {
    e.thread = prev_thread_;
    e.queue = prev_queue_;
  }
  ok = ok && (p = read_varint(p, e.id)) && (p = read_varint(p, e.size));
  if (ok && (tag & 0x20)) ok = (p = read_varint(p, e.flags)) != nullptr;
  if (ok && has_stack) ok = (p = read_varint(p, e.stack)) != nullptr;
  if (!ok) fail(binary_where(record) + "a number is longer than 64 bits (corrupt data)");
  if (p > limit)
    fail(binary_where(record) + "truncated: the record runs past the end of the input");
  if (have_seq_) {
    if (seq >= ~std::uint64_t{0} - last_seq_) fail(binary_where(record) + "seq overflows 64 bits");
    e.seq = last_seq_ + 1 + seq;
  } else {
    e.seq = seq;
  }
  e.time_ns = prev_time_ + ((dt >> 1) ^ (~(dt & 1) + 1));
  if (e.size > max_event_size) {
    fail(binary_where(record) + "size " + std::to_string(e.size) +
         " bytes is above 2^62, larger than any device: corrupt input");
  }
  return p;
}

bool trace_reader::next_binary(trace_event& out) {
  for (;;) {
    if (end_ - pos_ < max_record_bytes + 2 * 1024 + 32 && !eof_) refill();
    if (pos_ == end_) return false;
    ++line_;
    const std::uint64_t record = line_ - 1;
    const unsigned char* start = reinterpret_cast<const unsigned char*>(buffer_.data() + pos_);
    const unsigned char* limit = reinterpret_cast<const unsigned char*>(buffer_.data() + end_);
    // Every varint read below stays inside the buffer's valid bytes only if the record is
    // complete; decode into a bounded scratch copy when the buffer's tail is short.
    unsigned char scratch[max_record_bytes + 16];
    const std::size_t avail = static_cast<std::size_t>(limit - start);
    if (avail < max_record_bytes) {
      std::memset(scratch, 0, sizeof scratch);
      std::memcpy(scratch, start, avail);
      start = scratch;
      limit = scratch + avail;
    }
    const unsigned tag = *start;
    if (tag == 7) {
      read_binary_metadata(record);
      continue;
    }
    if ((tag == 5 || tag == 6) && version_ >= sites_format_version) {
      read_binary_site(tag, record);
      continue;
    }
    trace_event e;
    const unsigned char* p = decode_binary_event(tag, start + 1, limit, record, e);
    check_event(e);
    pos_ += static_cast<std::size_t>(p - start);
    prev_time_ = e.time_ns;
    prev_thread_ = e.thread;
    prev_queue_ = e.queue;
    out = e;
    return true;
  }
}

}  // namespace clpool::trace
