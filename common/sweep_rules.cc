#include "common/sweep_rules.h"

#include <algorithm>
#include <cstring>

namespace clpool::common {

std::optional<sweep_point> parse_sweep_point(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return {};
  const std::string kind = text.substr(0, colon);
  const std::string digits = text.substr(colon + 1);
  // At most 19 digits: every such number fits in 64 bits.
  if (digits.empty() || digits.size() > 19 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return {};
  const std::uint64_t n = std::stoull(digits);
  if (n == 0 || (kind != "alloc" && kind != "first-use")) return {};
  return sweep_point{kind == "first-use", n};
}

std::string to_string(const sweep_point& p) {
  return (p.first_use ? "first-use:" : "alloc:") + std::to_string(p.n);
}

std::string sweep_timeout_problem(double seconds) {
  if (!(seconds > 0)) return "is not a number of seconds above 0";               // NaN and -inf too
  if (seconds > longest_sweep_timeout) return "is more than a week (604800 s)";  // inf too
  return "";
}

std::optional<double> fault_free_limit(std::optional<double> timeout) {
  if (!timeout) return std::nullopt;
  return std::max(fault_free_limit_factor * *timeout, 60.0);
}

double sweep_run_timeout(std::optional<double> timeout, double fault_free_seconds) {
  return timeout.value_or(std::max(10.0, 10 * fault_free_seconds));
}

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) +
         (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
}

}  // namespace clpool::common
