// Text helpers the configuration grammars share (config_*.cc). Internal to //mockcl:config.
#ifndef MOCKCL_CONFIG_CONFIG_TEXT_H_
#define MOCKCL_CONFIG_CONFIG_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mockcl/config/config.h"

namespace mockcl::config_text {

// 'text', for messages.
std::string quote(std::string_view s);
// The fields of `s` between `sep`s (empty ones kept).
std::vector<std::string_view> split(std::string_view s, char sep);
// A non-negative decimal integer; `what` names it in the error.
value_or_error<uint64_t> parse_uint(std::string_view text, std::string_view what);
// on/off/true/false/1/0.
value_or_error<bool> parse_bool(std::string_view text, std::string_view what);

}  // namespace mockcl::config_text

#endif  // MOCKCL_CONFIG_CONFIG_TEXT_H_
