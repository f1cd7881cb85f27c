// Progress on stderr for clpool_replay: a bar for the replay under way and, when a run has more
// than one replay (--compare, --min-capacity), the count over the whole run and an ETA.
//
// Shown only when stderr is a terminal (redrawn in place) unless --progress asks for it anyway
// (then one line per update, so a log file stays readable); --no-progress hides it.
#ifndef CLPOOL_TOOLS_REPLAY_PROGRESS_H_
#define CLPOOL_TOOLS_REPLAY_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace clpool::replay_cli {

enum class progress_style { off, in_place, lines };

// off when `suppressed` (--no-progress); lines when `forced` (--progress) and stderr is not a
// terminal; in_place on a terminal.
progress_style choose_progress_style(bool forced, bool suppressed, bool stderr_is_terminal);

// "45s", "3m05s", "2h07m".
std::string format_duration(double seconds);

// Replays done over the whole run, an estimate of those to come and the time left. A run is a
// sequence of configurations, each a sequence of replays; the caller says where it is.
class run_progress {
 public:
  using clock = std::function<double()>;  // seconds, monotonic

  // `configs` configurations; `now` defaults to a steady clock.
  explicit run_progress(std::size_t configs, clock now = {});

  // Before each replay of configuration `config` (0-based, never decreasing): `left_in_config`
  // estimates the replays this configuration still needs, counting this one; 0 when unknown.
  void start_replay(std::size_t config, std::uint64_t left_in_config);
  // After it.
  void end_replay();

  // "replay 7 of ~26, config 2 of 3, ETA 1m05s" with `fraction` (0..1) of the current replay
  // done; "of ?" and no ETA while the total is unknown.
  std::string summary(double fraction) const;

  // The estimated total number of replays, 0 while unknown.
  std::uint64_t estimated_total() const;

 private:
  std::size_t configs_;
  clock now_;
  double start_ = 0;
  std::size_t config_ = 0;
  std::uint64_t done_ = 0;                      // replays finished, all configurations
  std::uint64_t done_in_config_ = 0;            // of those, in the current configuration
  std::uint64_t finished_configs_replays_ = 0;  // replays of configurations before the current
  std::uint64_t left_in_config_ = 0;            // the last estimate, counting the replay under way
  bool running_ = false;
};

// Writes progress lines to `out` in `style`: in place ("\r...", cleared by clear()) or one
// line each (prefixed "clpool_replay: progress: ", at most one every `min_interval` seconds
// unless `always`, so a log is not flooded).
class progress_printer {
 public:
  progress_printer(progress_style style, std::FILE* out, double min_interval = 2.0,
                   run_progress::clock now = {});
  bool enabled() const { return style_ != progress_style::off; }
  void show(const std::string& line, bool always = false);
  void clear();

 private:
  progress_style style_;
  std::FILE* out_;
  double min_interval_;
  run_progress::clock now_;
  double last_line_ = -1e300;  // when the last line was written (lines style)
  std::size_t shown_ = 0;      // width of the line drawn in place
};

// "[#####.........]  42%" for `done` of `total` bytes, or "123 MiB read" when the total is
// unknown (a pipe).
std::string progress_bar(std::uint64_t done, std::uint64_t total);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_PROGRESS_H_
