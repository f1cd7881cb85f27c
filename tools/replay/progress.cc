#include "tools/replay/progress.h"

#include <algorithm>
#include <cmath>

namespace clpool::replay_cli {

progress_style choose_progress_style(bool forced, bool suppressed, bool stderr_is_terminal) {
  if (suppressed) return progress_style::off;
  if (stderr_is_terminal) return progress_style::in_place;
  return forced ? progress_style::lines : progress_style::off;
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  }
  return buf;
}

namespace {

run_progress::clock or_steady_clock(run_progress::clock now) {
  if (now) return now;
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

}  // namespace

run_progress::run_progress(std::size_t configs, clock now)
    : configs_(std::max<std::size_t>(configs, 1)),
      now_(or_steady_clock(std::move(now))),
      start_(now_()) {}

void run_progress::start_replay(std::size_t config, std::uint64_t left_in_config) {
  if (config != config_) {
    finished_configs_replays_ += done_in_config_;
    done_in_config_ = 0;
    config_ = config;
  }
  left_in_config_ = left_in_config;
  running_ = true;
}

void run_progress::end_replay() {
  if (!running_) return;
  running_ = false;
  ++done_;
  ++done_in_config_;
  left_in_config_ = left_in_config_ > 0 ? left_in_config_ - 1 : 0;
}

std::uint64_t run_progress::estimated_total() const {
  // Configurations before this one: as many replays each as they took on average (rounded up).
  const std::uint64_t per_finished =
      config_ == 0 ? 0 : (finished_configs_replays_ + config_ - 1) / config_;
  // This one: what it has run plus what it still needs, at least the replay under way; while its
  // own estimate is unknown, as many as the earlier ones took.
  std::uint64_t this_config = done_in_config_ + left_in_config_;
  if (left_in_config_ == 0 && running_) {
    if (config_ == 0) return 0;
    this_config = std::max(done_in_config_ + 1, per_finished);
  }
  // Later ones: as many as the configurations so far took on average, this one included.
  const std::uint64_t later = configs_ - config_ - 1;
  const std::uint64_t per_config =
      (finished_configs_replays_ + this_config + config_) / (config_ + 1);
  return finished_configs_replays_ + this_config + later * per_config;
}

std::string run_progress::summary(double fraction) const {
  const std::uint64_t total = estimated_total();
  const bool exact = total != 0 && config_ + 1 == configs_ && left_in_config_ <= 1;
  std::string s = "replay " + std::to_string(done_ + (running_ ? 1 : 0)) + " of " +
                  (total == 0 ? std::string("?") : (exact ? "" : "~") + std::to_string(total));
  if (configs_ > 1)
    s += ", config " + std::to_string(config_ + 1) + " of " + std::to_string(configs_);
  const double done =
      static_cast<double>(done_) + (running_ ? std::clamp(fraction, 0.0, 1.0) : 0.0);
  const double elapsed = now_() - start_;
  if (total != 0 && done > 0 && elapsed > 0) {
    const double left = std::max(static_cast<double>(total) - done, 0.0);
    s += ", ETA " + format_duration(elapsed / done * left);
  }
  return s;
}

progress_printer::progress_printer(progress_style style, std::FILE* out, double min_interval,
                                   run_progress::clock now)
    : style_(style),
      out_(out),
      min_interval_(min_interval),
      now_(or_steady_clock(std::move(now))) {}

void progress_printer::show(const std::string& line, bool always) {
  if (style_ == progress_style::off) return;
  if (style_ == progress_style::lines) {
    const double t = now_();
    if (!always && t - last_line_ < min_interval_) return;
    last_line_ = t;
    std::fprintf(out_, "clpool_replay: progress: %s\n", line.c_str());
  } else {
    // Pad over a longer previous line.
    std::fprintf(out_, "\r%s%*s", line.c_str(),
                 static_cast<int>(shown_ > line.size() ? shown_ - line.size() : 0), "");
    shown_ = std::max(shown_, line.size());  // the padding is on the screen too
  }
  std::fflush(out_);
}

void progress_printer::clear() {
  if (style_ != progress_style::in_place || shown_ == 0) return;
  std::fprintf(out_, "\r%*s\r", static_cast<int>(shown_), "");
  std::fflush(out_);
  shown_ = 0;
}

std::string progress_bar(std::uint64_t done, std::uint64_t total) {
  char buf[96];
  if (total == 0) {
    std::snprintf(buf, sizeof buf, "%llu MiB read", static_cast<unsigned long long>(done >> 20));
  } else {
    const int pct = static_cast<int>(100.0 * static_cast<double>(std::min(done, total)) /
                                     static_cast<double>(total));
    const int bar = pct * 30 / 100;
    std::snprintf(buf, sizeof buf, "[%.*s%.*s] %3d%%", bar, "##############################",
                  30 - bar, "..............................", pct);
  }
  return buf;
}

}  // namespace clpool::replay_cli
