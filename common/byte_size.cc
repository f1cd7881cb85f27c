#include "common/byte_size.h"

#include <cctype>
#include <charconv>
#include <cstdio>

#include "common/text_escape.h"

namespace clpool::common {
namespace {

// Only blanks: a newline or other control character is never part of a size.
bool is_space(char c) { return c == ' ' || c == '\t'; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct named_unit {
  const char* name;     // the binary unit, as written in suggestions
  const char* alias;    // the short form
  const char* decimal;  // the ambiguous decimal spelling that is refused
  unsigned shift;
};
constexpr named_unit units[] = {{"KiB", "k", "kb", 10}, {"MiB", "m", "mb", 20},
                                {"GiB", "g", "gb", 30}, {"TiB", "t", "tb", 40},
                                {"PiB", "p", "pb", 50}, {"EiB", "e", "eb", 60}};

}  // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text, std::string& why) {
  std::size_t p = 0;
  while (p < text.size() && is_space(text[p])) ++p;
  std::size_t q = text.size();
  while (q > p && is_space(text[q - 1])) --q;
  const std::string_view s = text.substr(p, q - p);
  if (s.empty()) return why = "is empty", std::nullopt;
  if (s[0] == '-') return why = "is negative", std::nullopt;
  std::size_t digits = 0;
  while (digits < s.size() && is_digit(s[digits])) ++digits;
  if (digits == 0) return why = "is not a number", std::nullopt;
  if (digits < s.size() && (s[digits] == '.' || s[digits] == ',')) {
    return why = "is not a whole number of bytes", std::nullopt;
  }
  std::uint64_t value = 0;
  if (std::from_chars(s.data(), s.data() + digits, value).ec != std::errc()) {
    return why = "is larger than 2^64 - 1 bytes", std::nullopt;
  }
  std::size_t u = digits;
  while (u < s.size() && is_space(s[u])) ++u;
  const std::string_view unit_text = s.substr(u);
  const std::string unit = lower(unit_text);
  if (unit.empty() || unit == "b") return value;
  for (const named_unit& n : units) {
    if (unit == lower(n.name) || unit == n.alias) {
      if (value > (~std::uint64_t{0} >> n.shift)) {
        return why = "is larger than 2^64 - 1 bytes", std::nullopt;
      }
      return value << n.shift;
    }
    if (unit == n.decimal) {
      why = "is ambiguous: decimal units are not accepted; write " +
            std::string(s.substr(0, digits)) + n.name;
      return std::nullopt;
    }
  }
  why = "has an unknown unit '" + ascii_text(unit_text) +
        "' (use B, KiB, MiB, GiB, TiB, PiB or EiB, or k, m, g, t, p, e)";
  return std::nullopt;
}

std::optional<std::uint64_t> parse_size(std::string_view text, size_rules rules, std::string& why) {
  const std::optional<std::uint64_t> v = parse_byte_size(text, why);
  if (v && rules.device && *v > max_device_bytes) {
    why = "is larger than the largest device, 2^62 bytes (4 EiB)";
    return std::nullopt;
  }
  if (v && rules.positive && *v == 0) {
    why = "is zero";
    return std::nullopt;
  }
  return v;
}

std::string format_bytes_exact(std::uint64_t bytes, byte_units units) {
  static const char* const spaced[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  static const char* const letter[] = {"", "k", "m", "g", "t"};
  for (int i = 4; i >= 1; --i) {
    const unsigned shift = 10u * static_cast<unsigned>(i);
    if (bytes != 0 && (bytes & ((std::uint64_t{1} << shift) - 1)) == 0) {
      const std::string n = std::to_string(bytes >> shift);
      switch (units) {
        case byte_units::spaced:
          return n + " " + spaced[i];
        case byte_units::joined:
          return n + spaced[i];
        case byte_units::letter:
          return n + letter[i];
      }
    }
  }
  return units == byte_units::spaced ? std::to_string(bytes) + " B" : std::to_string(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int i = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024.0 && i < 6) {
    v /= 1024.0;
    ++i;
  }
  char buf[48];
  if (i == 0 || (bytes & ((std::uint64_t{1} << (10 * i)) - 1)) == 0) {
    std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(bytes >> (10 * i)),
                  names[i]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, names[i]);
  }
  return buf;
}

std::string format_bytes_both(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

}  // namespace clpool::common
