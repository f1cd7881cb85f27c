#include "replay/config.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "common/byte_size.h"
#include "common/cli.h"

namespace clpool::replay {

std::optional<double> parse_ratio(std::string_view text) {
  double ratio = 0;
  // from_chars, unlike strtod, reads no hexadecimal, no leading space and no locale's comma.
  const auto r = std::from_chars(text.data(), text.data() + text.size(), ratio);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(ratio) ||
      ratio < 0) {
    return std::nullopt;
  }
  return ratio;
}

replay_config parse_config(std::string_view text) {
  const std::string t(text);
  const auto bad = [&](const std::string& why) {
    return config_error("configuration '" + t + "': " + why +
                        " (expected nopool, pool, or pool:lb=N,limit=BYTES,trim-max-held=BYTES,"
                        "trim-ratio=R,alloc=device|immediate)");
  };
  replay_config config;
  if (text == "nopool") {
    config.use_pool = false;
    return config;
  }
  if (text.substr(0, 6) == "nopool") throw bad("nopool takes no options");
  if (text == "pool") return config;
  if (text.substr(0, 5) != "pool:") throw bad("unknown configuration");
  std::string_view rest = text.substr(5);
  if (rest.empty()) throw bad("no options after 'pool:'");
  std::vector<std::string> seen;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty()) throw bad("trailing comma");
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) throw bad("option '" + std::string(item) + "' has no '='");
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    for (const auto& k : seen) {
      if (k == key) throw bad("option '" + key + "' given twice");
    }
    seen.push_back(key);
    if (key == "lb" || key == "leading-bits") {
      unsigned lb = 0;
      const auto r = std::from_chars(value.data(), value.data() + value.size(), lb);
      if (r.ec != std::errc() || r.ptr != value.data() + value.size() ||
          !leading_bits_is_valid(lb)) {
        throw bad("lb '" + std::string(value) + "' must be a whole number from 0 to " +
                  std::to_string(max_leading_bits));
      }
      config.leading_bits = lb;
    } else if (key == "limit") {
      try {
        config.limit = common::size_option(value, "limit");
      } catch (const common::usage_error& e) {
        throw bad(e.what());
      }
      if (config.limit == 0) throw bad("limit must be positive");
    } else if (key == "trim-max-held") {
      try {
        config.trim.max_held_bytes = common::size_option(value, "trim-max-held");
      } catch (const common::usage_error& e) {
        throw bad(e.what());
      }
    } else if (key == "trim-ratio") {
      const std::optional<double> ratio = parse_ratio(value);
      if (!ratio) throw bad("trim-ratio '" + std::string(value) + "' must be a finite number >= 0");
      config.trim.max_held_to_active_ratio = *ratio;
    } else if (key == "alloc") {
      if (value != "device" && value != "immediate")
        throw bad("alloc '" + std::string(value) + "' must be device or immediate");
      config.immediate_allocator = value == "immediate";
    } else {
      throw bad("unknown option '" + key + "'");
    }
  }
  return config;
}

std::string to_string(const replay_config& config) {
  if (!config.use_pool) return "nopool";
  std::string s = "pool:lb=" + std::to_string(config.leading_bits);
  const auto bytes_text = [](std::uint64_t b) {
    return common::format_bytes_exact(b, common::byte_units::joined);
  };
  if (config.limit != unlimited) s += ",limit=" + bytes_text(config.limit);
  if (config.trim.max_held_bytes != unlimited) {
    s += ",trim-max-held=" + bytes_text(config.trim.max_held_bytes);
  }
  if (config.trim.max_held_to_active_ratio >= 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", config.trim.max_held_to_active_ratio);
    s += ",trim-ratio=";
    s += buf;
  }
  if (config.immediate_allocator) s += ",alloc=immediate";
  return s;
}

}  // namespace clpool::replay
