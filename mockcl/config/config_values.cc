// The value grammars: byte sizes (MOCKCL_DEVICES's capacities, the control API) and OpenCL
// status codes (fault rules), and the text helpers every grammar shares (config_text.h).
#include "mockcl/config/config.h"

#include <charconv>
#include <optional>

#include "common/byte_size.h"
#include "common/cl_status.h"
#include "mockcl/config/config_text.h"

namespace mockcl {

namespace config_text {

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

value_or_error<uint64_t> parse_uint(std::string_view text, std::string_view what) {
  uint64_t v = 0;
  if (text.empty()) return value_or_error<uint64_t>::fail(std::string(what) + " is empty");
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range)
    return value_or_error<uint64_t>::fail(std::string(what) + " " + quote(text) + " is too large");
  if (ec != std::errc() || p != text.data() + text.size())
    return value_or_error<uint64_t>::fail(std::string(what) + " " + quote(text) +
                                          " is not a non-negative integer");
  return v;
}

value_or_error<bool> parse_bool(std::string_view text, std::string_view what) {
  if (text == "on" || text == "true" || text == "1") return true;
  if (text == "off" || text == "false" || text == "0") return false;
  return value_or_error<bool>::fail(std::string(what) + " " + quote(text) +
                                    " is not one of on, off, true, false, 1, 0");
}

}  // namespace config_text

using config_text::quote;

value_or_error<uint64_t> parse_size(std::string_view text, clpool::common::size_rules rules) {
  std::string why;
  const std::optional<uint64_t> v = clpool::common::parse_size(text, rules, why);
  if (!v) return value_or_error<uint64_t>::fail("size " + quote(text) + " " + why);
  return *v;
}

value_or_error<int32_t> parse_status(std::string_view text) {
  if (const std::optional<int32_t> code = clpool::common::status_from_name(text)) {
    if (*code >= 0) return value_or_error<int32_t>::fail("status CL_SUCCESS is not an error");
    return *code;
  }
  if (!text.empty() && text[0] == '-') {
    int32_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && p == text.data() + text.size() && v < 0) return v;
  }
  return value_or_error<int32_t>::fail("status " + quote(text) +
                                       " is neither a negative integer nor a known CL_ error name");
}

std::string_view status_name(int32_t status) { return clpool::common::status_name(status); }

}  // namespace mockcl
