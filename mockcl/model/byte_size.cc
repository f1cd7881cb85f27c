#include "mockcl/model/byte_size.h"

#include <cctype>
#include <charconv>

namespace clpool::device_model {

std::optional<std::uint64_t> parse_byte_size(std::string_view text, std::string& why) {
  std::size_t p = 0;
  while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
  std::size_t q = text.size();
  while (q > p && std::isspace(static_cast<unsigned char>(text[q - 1]))) --q;
  const std::string_view s = text.substr(p, q - p);
  if (s.empty()) return why = "is empty", std::nullopt;
  if (s[0] == '-') return why = "is negative", std::nullopt;
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) return why = "is not a number", std::nullopt;
  if (digits < s.size() && (s[digits] == '.' || s[digits] == ',')) {
    return why = "is not a whole number of bytes", std::nullopt;
  }
  std::uint64_t value = 0;
  if (std::from_chars(s.data(), s.data() + digits, value).ec != std::errc()) {
    return why = "is larger than 2^64 - 1 bytes", std::nullopt;
  }
  std::string unit;
  for (char c : s.substr(digits)) {
    if (c != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (unit.empty() || unit == "b") return value;
  struct named_unit {
    const char* name;
    const char* alias;
    unsigned shift;
  };
  static constexpr named_unit units[] = {
      {"kib", "k", 10}, {"mib", "m", 20}, {"gib", "g", 30}, {"tib", "t", 40}};
  for (const named_unit& u : units) {
    if (unit == u.name || unit == u.alias) {
      if (value > (~std::uint64_t{0} >> u.shift)) return why = "is larger than 2^64 - 1 bytes", std::nullopt;
      return value << u.shift;
    }
  }
  why = "has an unknown unit '" + std::string(s.substr(digits)) + "'";
  return std::nullopt;
}

}  // namespace clpool::device_model
