// The out-of-memory sweep's rules that both sweeps apply: `clpool sweep` (tools/record/) and the
// pytest plugin's --clpool-oom-sweep (python/clpool/_plugin_sweep.py, through clpool._core): what
// a failure point is called, how long a run may take, how its signal is named.
#ifndef CLPOOL_COMMON_SWEEP_RULES_H_
#define CLPOOL_COMMON_SWEEP_RULES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace clpool::common {

// One failure point: the Nth device allocation or the Nth first use of a buffer (N from 1).
struct sweep_point {
  bool first_use = false;
  std::uint64_t n = 0;
  bool operator==(const sweep_point&) const = default;
};

// "alloc:7", "first-use:3" (the names reports give); nothing for anything else.
std::optional<sweep_point> parse_sweep_point(const std::string& text);
std::string to_string(const sweep_point& p);

// The longest timeout either sweep takes, a week: a longer one (inf, 1e300) is no time the
// operating system can wait for.
inline constexpr double longest_sweep_timeout = 604800;

// Why `seconds` is not a timeout ("is not a number of seconds above 0", "is more than a week
// (604800 s)"), or "" when it is one.
std::string sweep_timeout_problem(double seconds);

// How long the fault-free run may take: with a timeout, ten times it but at least a minute (a run
// slower than the timeout is hung; the fault-free run only slow); without one, no limit (nothing).
std::optional<double> fault_free_limit(std::optional<double> timeout);
inline constexpr int fault_free_limit_factor = 10;

// A run's timeout: the one given, else ten times the fault-free run, at least 10 s.
double sweep_run_timeout(std::optional<double> timeout, double fault_free_seconds);

// How a run killed by a signal is told: "signal 11 (SIGSEGV)"; a signal with no name (a
// real-time one) as "signal 40".
std::string signal_text(int sig);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_SWEEP_RULES_H_
