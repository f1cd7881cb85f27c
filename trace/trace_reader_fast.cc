// trace_reader's fast path for text traces: a well-formed event line parsed in one pass straight
// from the buffer (the careful path in trace_reader.cc handles everything else). A separate file
// only to keep trace_reader.cc readable; the class is trace_reader.h's.
#include <optional>
#include <string_view>

#include "trace/trace_reader.h"

namespace clpool::trace {

namespace {

// Parses a decimal u64 of at most 19 digits (which cannot overflow) ending in a blank. Returns
// the position after it, or nullptr to send the line to the careful parser.
inline const char* fast_decimal(const char* p, std::uint64_t& v) {
  const char* start = p;
  std::uint64_t x = 0;
  unsigned d;
  while ((d = static_cast<unsigned char>(*p) - '0') < 10) {
    x = x * 10 + d;
    ++p;
  }
  if (p == start || p - start > 19 || (*p != ' ' && *p != '\t')) return nullptr;
  v = x;
  return p;
}

inline const char* skip_blanks(const char* p) {
  while (*p == ' ' || *p == '\t') ++p;
  return p;
}

inline const char* word_end(const char* p) {
  while (static_cast<unsigned char>(*p) > ' ') ++p;
  return p;
}

}  // namespace

bool trace_reader::parse_fast(trace_event& out) {
  const char* p = buffer_.data() + pos_;
  trace_event e;
  if (!(p = fast_decimal(p, e.seq))) return false;
  if (!(p = fast_decimal(skip_blanks(p), e.time_ns))) return false;
  if (!(p = fast_decimal(skip_blanks(p), e.thread))) return false;
  if (!(p = fast_decimal(skip_blanks(p), e.queue))) return false;
  p = skip_blanks(p);
  const char* w = word_end(p);
  const std::optional<trace_action> action =
      parse_action(std::string_view(p, static_cast<std::size_t>(w - p)));
  if (!action || (*w != ' ' && *w != '\t')) return false;
  e.action = *action;
  if (!(p = fast_decimal(skip_blanks(w), e.id))) return false;
  if (!(p = fast_decimal(skip_blanks(p), e.size))) return false;
  p = skip_blanks(p);
  w = word_end(p);
  const std::optional<trace_kind> kind =
      parse_kind(std::string_view(p, static_cast<std::size_t>(w - p)));
  if (!kind || (*w != ' ' && *w != '\t')) return false;
  e.kind = *kind;
  p = skip_blanks(w);
  // flags: 0x-hex (what the writer emits) or decimal, then the end of the line.
  std::uint64_t flags = 0;
  if (p[0] == '0' && p[1] == 'x') {
    p += 2;
    const char* start = p;
    for (;; ++p) {
      const unsigned c = static_cast<unsigned char>(*p);
      unsigned d;
      if (c - '0' < 10)
        d = c - '0';
      else if ((c | 0x20) - 'a' < 6)
        d = (c | 0x20) - 'a' + 10;
      else
        break;
      flags = flags << 4 | d;
    }
    if (p == start || p - start > 16) return false;
  } else {
    const char* start = p;
    unsigned d;
    while ((d = static_cast<unsigned char>(*p) - '0') < 10) {
      flags = flags * 10 + d;
      ++p;
    }
    if (p == start || p - start > 19) return false;
  }
  e.flags = flags;
  if (*p == ' ' && version_ >= sites_format_version) {
    const char* start = ++p;
    unsigned d;
    std::uint64_t stack = 0;
    while ((d = static_cast<unsigned char>(*p) - '0') < 10) {
      stack = stack * 10 + d;
      ++p;
    }
    if (p == start || p - start > 19) return false;
    e.stack = stack;
  }
  if (*p != '\n') return false;  // trailing blanks, CR, end of input: the careful path decides
  const std::size_t consumed = static_cast<std::size_t>(p + 1 - buffer_.data());
  if (consumed > end_) return false;  // ran past the valid bytes (cannot happen with the sentinel)
  ++line_;
  check_event(e);  // throws for seq, size and liveness violations, naming this line
  pos_ = consumed;
  out = e;
  return true;
}

}  // namespace clpool::trace
