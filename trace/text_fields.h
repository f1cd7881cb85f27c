// The text trace's fields as trace_reader reads them (trace_reader.cc, trace_reader_event.cc):
// blanks between fields, unsigned decimal and hex numbers with the reason one is refused, and the
// quoting of a field or line in an error message. Private to //trace:trace_format.
#ifndef CLPOOL_TRACE_TEXT_FIELDS_H_
#define CLPOOL_TRACE_TEXT_FIELDS_H_

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace clpool::trace {

inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Quoted, shortened text of a field or line for error messages (a garbage line can be long and
// binary).
inline std::string quote(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < 60; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (s.size() > 60) out += "...";
  return out + "'";
}

enum class number_status { ok, empty, negative, not_a_number, overflow };

inline number_status parse_decimal(std::string_view s, std::uint64_t& value) {
  if (s.empty()) return number_status::empty;
  if (s[0] == '-') return number_status::negative;
  std::uint64_t v = 0;
  for (const char c : s) {
    const unsigned d = static_cast<unsigned char>(c) - '0';
    if (d > 9) return number_status::not_a_number;
    if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) {
      return number_status::overflow;
    }
  }
  value = v;
  return number_status::ok;
}

inline number_status parse_hex(std::string_view s, std::uint64_t& value) {
  if (s.empty()) return number_status::not_a_number;
  if (s.size() > 16) {
    for (const char c : s) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return number_status::not_a_number;
    }
    return number_status::overflow;
  }
  std::uint64_t v = 0;
  for (const char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return number_status::not_a_number;
    v = v << 4 | d;
  }
  value = v;
  return number_status::ok;
}

}  // namespace clpool::trace

#endif  // CLPOOL_TRACE_TEXT_FIELDS_H_
