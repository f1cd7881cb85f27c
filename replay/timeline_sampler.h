// The replay engine's timeline (replay_options::timeline): a bounded table of points that keeps
// maxima, and the last events at full resolution. Internal to replay.cc.
#ifndef CLPOOL_REPLAY_TIMELINE_SAMPLER_H_
#define CLPOOL_REPLAY_TIMELINE_SAMPLER_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "replay/replay.h"

namespace clpool::replay {

// Keeps at most `max` points by merging neighbours (keeping maxima, so peaks survive) and
// doubling the events per point whenever the table fills.
class timeline_sampler {
 public:
  timeline_sampler(std::size_t max, std::size_t tail)
      : max_(std::max<std::size_t>(max & ~std::size_t{1}, 2)), tail_(tail) {}

  void add(std::uint64_t event, std::uint64_t active, std::uint64_t held, std::uint64_t managed,
           std::uint64_t device) {
    if (tail_.size() != 0)
      tail_[tail_next_++ % tail_.size()] = {event, active, held, managed, device};
    if (in_current_ == 0) {
      current_ = {event, active, held, managed, device};
    } else {
      merge(current_, {event, active, held, managed, device});
    }
    if (++in_current_ == stride_) {
      points_.push_back(current_);
      in_current_ = 0;
      if (points_.size() >= max_) compact();
    }
  }

  std::vector<timeline_point> points() const {
    std::vector<timeline_point> out = points_;
    if (in_current_ != 0) out.push_back(current_);
    return out;
  }

  // The last events added, one point each, oldest first.
  std::vector<timeline_point> tail() const {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(tail_next_, tail_.size()));
    std::vector<timeline_point> out;
    out.reserve(n);
    for (std::uint64_t i = tail_next_ - n; i < tail_next_; ++i)
      out.push_back(tail_[i % tail_.size()]);
    return out;
  }

 private:
  static void merge(timeline_point& into, const timeline_point& p) {
    into.active_bytes = std::max(into.active_bytes, p.active_bytes);
    into.held_bytes = std::max(into.held_bytes, p.held_bytes);
    into.managed_bytes = std::max(into.managed_bytes, p.managed_bytes);
    into.device_used_bytes = std::max(into.device_used_bytes, p.device_used_bytes);
  }

  void compact() {
    std::size_t n = 0;
    for (std::size_t i = 0; i + 1 < points_.size(); i += 2) {
      timeline_point p = points_[i];
      merge(p, points_[i + 1]);
      points_[n++] = p;
    }
    points_.resize(n);
    stride_ *= 2;
  }

  std::size_t max_;
  std::uint64_t stride_ = 1;
  std::uint64_t in_current_ = 0;
  timeline_point current_;
  std::vector<timeline_point> points_;
  std::vector<timeline_point> tail_;  // a ring of the last events
  std::uint64_t tail_next_ = 0;       // events added so far; the next goes at this index mod size
};

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_TIMELINE_SAMPLER_H_
