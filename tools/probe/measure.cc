#include "tools/probe/measure.h"

#include <bit>
#include <utility>

#include "common/byte_size.h"
#include "common/cl_status.h"

namespace clpool::probe {
namespace {

using common::format_bytes_exact;

constexpr std::uint64_t svm_control_bytes = 4096;  // measure.cc's SVM control block
constexpr std::uint64_t page_check_buffers = 64;   // check_page's window, in measured pages

constexpr std::uint64_t pow2(unsigned k) { return std::uint64_t{1} << k; }
unsigned floor_log2(std::uint64_t v) { return static_cast<unsigned>(std::bit_width(v) - 1); }

// A measurement stopped short; `why` becomes measurement::incomplete.
struct stop {
  std::string why;
};

// The buffers one step holds. Releases them when it goes out of scope, so that every step starts
// from the state its caller left, whatever it found (and whatever was thrown).
class holding {
 public:
  explicit holding(device_port& d) : d_(d) {}
  holding(const holding&) = delete;
  holding& operator=(const holding&) = delete;
  ~holding() { release_all(); }
  void keep(std::size_t id) { ids_.push_back(id); }
  // Releases the oldest buffer held.
  void release_first() {
    d_.release(ids_.front());
    ids_.erase(ids_.begin());
  }
  void release_all() {
    while (!ids_.empty()) {
      d_.release(ids_.back());
      ids_.pop_back();
    }
  }

 private:
  device_port& d_;
  std::vector<std::size_t> ids_;
};

class prober {
 public:
  prober(device_port& d, const probe_limits& l, measurement& m) : d_(d), l_(l), m_(m) {}

  // Allocates `bytes`; a kept buffer is released with `h`. Returns whether the device accepted.
  // A refusal that disagrees with the first one about where or how is a contradiction.
  bool try_alloc(holding& h, std::uint64_t bytes) {
    if (++m_.allocations > l_.max_allocations) {
      throw stop{"more than " + std::to_string(l_.max_allocations) + " allocations needed"};
    }
    const attempt a = d_.allocate(bytes);
    switch (a.result) {
      case attempt::kind::accepted:
        h.keep(a.id);
        return true;
      case attempt::kind::refused:
        if (!common::is_out_of_memory_status(a.status)) {
          throw probe_failure(a.call + " returned " + std::to_string(a.status) + " for " +
                              std::to_string(bytes) + " bytes");
        }
        if (!refused_yet_) {
          refused_yet_ = true;
          m_.oom_at = a.where;
          m_.oom_status = a.status;
          m_.oom_call = a.call;
        } else if (a.where != m_.oom_at || a.status != m_.oom_status) {
          throw stop{"the device refused in two ways: " + m_.oom_call + " " +
                     std::to_string(m_.oom_status) + ", then " + a.call + " " +
                     std::to_string(a.status)};
        }
        return false;
      case attempt::kind::invalid_size:
        throw probe_failure(a.call + " refused " + std::to_string(bytes) +
                            " bytes as an invalid size (" + std::to_string(a.status) +
                            "), below CL_DEVICE_MAX_MEM_ALLOC_SIZE");
      case attempt::kind::failed:
        break;
    }
    throw probe_failure(a.call + " failed with " + std::to_string(a.status) + " for " +
                        std::to_string(bytes) + " bytes");
  }

  // Whether `first` and then `second` bytes both fit now (both released afterwards).
  bool pair_fits(std::uint64_t first, std::uint64_t second) {
    holding h(d_);
    if (!try_alloc(h, first))
      throw stop{"a buffer that must fit was refused (" + std::to_string(first) + " bytes)"};
    return try_alloc(h, second);
  }

  void max_alloc() {
    const attempt a = d_.create_untouched(l_.max_alloc + 1);
    m_.max_alloc_status = a.result == attempt::kind::accepted ? 0 : a.status;
    m_.max_alloc_enforced = a.result == attempt::kind::invalid_size;
    if (a.result == attempt::kind::failed) {
      throw probe_failure(a.call + " failed with " + std::to_string(a.status) + " creating " +
                          std::to_string(l_.max_alloc + 1) +
                          " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE + 1)");
    }
  }

  // Greedy fill with decreasing powers of two. Every accepted 2^k is at least a page (below a
  // page nothing is left: the remainder is a multiple of the page smaller than 2^(k+1)), so each
  // costs exactly its size and the total is the largest the device accepts.
  void usable(holding& fill) {
    std::uint64_t top = std::min(l_.max_alloc, l_.max_bytes);
    if (l_.free_at_start > 0) top = std::min(top, l_.free_at_start);
    std::uint64_t capped = 0;  // the largest size the cap kept from being tried
    for (int k = static_cast<int>(floor_log2(std::max<std::uint64_t>(top, 1))); k >= 0; --k) {
      const std::uint64_t size = pow2(static_cast<unsigned>(k));
      std::uint64_t n = 0;
      for (;;) {
        if (m_.usable + size > l_.max_bytes) {
          capped = std::max(capped, size);
          break;
        }
        if (!try_alloc(fill, size)) {
          m_.smallest_refused = size;
          break;
        }
        if (m_.page_window == 0) m_.page_window = size;
        m_.usable += size;
        ++n;
      }
      if (n > 0) m_.fill.emplace_back(size, n);
    }
    if (l_.at_full) l_.at_full();
    m_.refused = refused_yet_ && capped == 0;
    if (refused_yet_ && capped != 0) {
      // S + 2^k > cap: whether the device had room for 2^k more is unknown. Not with a cap that
      // is a multiple of the fill's sizes (a power of two) and above the device's usable memory.
      throw stop{"the fill reached --max-bytes before the device's limit was certain: " +
                 std::to_string(m_.usable) + " bytes accepted, and " + std::to_string(capped) +
                 " more would pass the cap; give a power of two above the device's free memory"};
    }
    if (!m_.refused) throw stop{never_refused()};
    if (m_.usable == 0) throw stop{"the device refused even 1 byte"};
    if (m_.usable > l_.free_at_start) {
      throw stop{"the device accepted " + std::to_string(m_.usable) + " bytes, more than the " +
                 std::to_string(l_.free_at_start) + " free at start: the headroom cannot be known"};
    }
    if (l_.free_at_start - m_.usable > device_model::max_headroom)
      throw stop{"headroom above 1 TiB"};
    m_.headroom = l_.free_at_start - m_.usable;
    m_.headroom_measured = true;
  }

  // The fill took everything up to the cap. A GPU larger than the cap is measured with a larger
  // one; a device whose memory is the host's may never refuse, whatever the cap (raising it
  // toward the host's memory ends in the host's out-of-memory, or the driver's abort).
  std::string never_refused() const {
    std::string why = "the device accepted everything up to the cap (" + std::to_string(m_.usable) +
                      " bytes, --max-bytes) without refusing, so its limit cannot be measured";
    if (l_.gpu && l_.free_at_start >= l_.max_bytes) {
      why += "; it reports " + std::to_string(l_.free_at_start) +
             " bytes free: for a GPU, give --max-bytes a power of two above that";
    }
    return why +
           ". A device whose memory is the host's (a CPU device, POCL) may never refuse short "
           "of the host running out: write its profile by hand (tools/replay/README.md, "
           "\"Device profiles\")";
  }

  // With the fill held, not even `smallest_refused` bytes fit: an SVM block of that size shows
  // where the device refuses SVM. Never stops the measurement; svm_note says what was seen.
  // One SVM block through the port, counted; nothing (svm_note says why) without SVM.
  std::optional<attempt> try_svm(std::uint64_t bytes) {
    std::optional<attempt> a = d_.svm_once(bytes);
    if (a)
      ++m_.allocations;
    else
      m_.svm_note = "the device has no SVM", m_.svm_absent = true;
    return a;
  }

  // The control, with the device empty: a small SVM block must fit, or a refusal later says
  // nothing about memory. False (svm_note says why) when SVM cannot be measured.
  bool svm_control() {
    const std::optional<attempt> a = try_svm(svm_control_bytes);
    if (!a) return false;
    if (a->ok()) return true;
    m_.svm_note = "an SVM block of " + common::format_bytes_both(svm_control_bytes) +
                  " failed with the device empty: " + a->said();
    return false;
  }

  void svm() {
    const std::uint64_t bytes = std::max<std::uint64_t>(m_.smallest_refused, 1);
    const std::optional<attempt> a = try_svm(bytes);
    if (!a) return;
    const std::string block = "an SVM block of " + common::format_bytes_both(bytes);
    if (a->ok()) {
      m_.svm_note = block +
                    " fitted where a buffer of that size did not (SVM is not charged to "
                    "the buffers' memory)";
    } else if (a->result != attempt::kind::refused || !common::is_out_of_memory_status(a->status)) {
      m_.svm_note = block + ": " + a->said();
    } else if (a->where == refusal_point::execution ||
               (a->where == refusal_point::first_use && m_.oom_at == refusal_point::creation)) {
      m_.svm_note = block + " was refused by " + a->said() +
                    ", which a profile cannot say (SVM in a command's event, or at first use "
                    "where buffers are refused at creation)";
    } else {
      m_.svm_oom_at = a->where;
      m_.svm_call = a->call;
    }
  }

  // The window X (the first fill buffer) is free now, plus less than a page.
  void page() {
    const unsigned x = floor_log2(m_.page_window);
    // Smallest j in [0, x) with pair_fits(X - 2^j, 1): X - 2^j costs X - 2^j when 2^j is a
    // multiple of the page, else all of X, leaving less than the page the 1 byte opens.
    unsigned lo = 0, hi = x;
    while (lo < hi) {
      const unsigned mid = (lo + hi) / 2;
      if (pair_fits(m_.page_window - pow2(mid), 1))
        hi = mid;
      else
        lo = mid + 1;
    }
    if (lo == x) {
      throw stop{"the page is at least " + std::to_string(m_.page_window) +
                 " bytes, the largest buffer the fill used: too large to measure here"};
    }
    if (pow2(lo) > device_model::max_page) throw stop{"the page is larger than 1 GiB"};
    m_.page = pow2(lo);
  }

  // The fill and the page's bisection assume a page that is a power of two: every 2^k at least a
  // page costs exactly its size. A device whose page is not one (96 KiB) answers them as if its
  // page were a power of two below it, so the measured page is checked where it would show: in a
  // window of n measured pages, n buffers of a page each must fit, and then not 1 byte more.
  void check_page() {
    const std::uint64_t p = *m_.page, x = m_.page_window;
    const std::uint64_t n = std::min<std::uint64_t>(x / p, page_check_buffers);
    const std::string why =
        ": the device's page is not a power of two (or not one page for every buffer size), "
        "which no profile the probe writes can describe; write its profile by hand "
        "(tools/replay/README.md, \"Device profiles\")";
    holding h(d_);
    if (x > n * p && !try_alloc(h, x - n * p)) throw stop{"the page window shrank"};
    for (std::uint64_t i = 0; i < n; ++i) {
      if (!try_alloc(h, p)) {
        throw stop{"in a window of " + std::to_string(n) + " measured pages (" +
                   format_bytes_exact(p) + "), buffer " + std::to_string(i + 1) + " of " +
                   format_bytes_exact(p) + " was refused" + why};
      }
    }
    if (try_alloc(h, 1)) {
      throw stop{std::to_string(n) + " buffers of the measured page (" + format_bytes_exact(p) +
                 ") filled a window of as many pages, and 1 byte more still fit" + why};
    }
  }

  // Called with exactly one page free (plus less than a page).
  void packing() {
    const std::uint64_t p = *m_.page;
    if (!pair_fits(1, 1)) {  // two requests never share a page
      m_.pack_seen = 0;
      m_.pack_limit = 0;
      m_.pack_granule = 1;
      return;
    }
    std::uint64_t lo = 1, hi = p - 1;  // pair_fits(lo, 1) holds; find the largest such
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo + 1) / 2;
      if (pair_fits(mid, 1))
        lo = mid;
      else
        hi = mid - 1;
    }
    m_.pack_seen = lo;
    // The granule is a power of two (it divides the page) and at most the pack limit.
    const unsigned f = floor_log2(lo);
    std::uint64_t g = 1;
    if (f > 0) {
      m_.granule_fill = p / pow2(f) - 1;
      m_.granule_fill_size = pow2(f);
      if (m_.granule_fill + m_.allocations > l_.max_allocations) {
        throw stop{"the granule needs " + std::to_string(m_.granule_fill) +
                   " buffers to fill a page: the pack limit is tiny against the page"};
      }
      holding h(d_);
      for (std::uint64_t i = 0; i < m_.granule_fill; ++i) {
        if (!try_alloc(h, pow2(f))) throw stop{"a page did not take its share of packed buffers"};
      }
      // 2^f bytes are free in the page: 2^f - 2^e + 1 then 1 byte fit iff 2^e >= 2g.
      unsigned elo = 1, ehi = f + 1;  // ehi: none fits, g = 2^f
      while (elo < ehi) {
        const unsigned mid = (elo + ehi) / 2;
        if (pair_fits(pow2(f) - pow2(mid) + 1, 1))
          ehi = mid;
        else
          elo = mid + 1;
      }
      g = elo == f + 1 ? pow2(f) : pow2(elo - 1);
    }
    m_.pack_granule = g;
    m_.pack_limit = lo >= p - g ? p : lo;
  }

  void run() {
    max_alloc();
    if (l_.after_max_alloc) l_.after_max_alloc(m_);
    holding fill(d_);
    const bool svm_measurable = svm_control();
    usable(fill);
    if (svm_measurable) svm();
    // The first (largest) fill buffer becomes the page window.
    fill.release_first();
    page();
    if (*m_.page > 1) check_page();
    if (*m_.page == 1) {
      m_.pack_seen = 0;
      m_.pack_limit = 0;
      m_.pack_granule = 1;
    } else {
      holding ballast(d_);
      if (!try_alloc(ballast, m_.page_window - *m_.page)) throw stop{"the page window shrank"};
      packing();
    }
    m_.complete = true;
  }

 private:
  device_port& d_;
  const probe_limits& l_;
  measurement& m_;
  bool refused_yet_ = false;
};

}  // namespace

measurement measure(device_port& device, const probe_limits& limits) {
  measurement m;
  prober p(device, limits, m);
  try {
    p.run();
  } catch (const stop& s) {
    m.incomplete = s.why;
  }
  return m;
}

device_profile measurement::profile(const std::string& name) const {
  device_profile p;
  p.name = name;
  p.max_alloc_enforced = max_alloc_enforced;
  if (refused) {
    p.oom_at = oom_at;
    p.oom_status = oom_status;
  }
  if (headroom_measured) p.headroom = headroom;
  if (svm_oom_at) p.svm_oom_at = *svm_oom_at;
  // Not measured (no probe can see it; report.cc says so): NVIDIA's answer, the device the probe
  // is for (one whose memory the driver enforces), promptly.
  p.commands_finish = device_model::command_completion::promptly;
  if (page) p.page = *page;
  if (pack_limit && pack_granule) {
    p.pack_limit = *pack_limit;
    p.pack_granule = *pack_granule;
  }
  return p;
}

std::vector<std::string_view> measurement::unmeasured() const {
  std::vector<std::string_view> keys;
  if (!refused) keys.insert(keys.end(), {"oom_at", "oom_status"});
  if (!headroom_measured) keys.push_back("headroom");
  if (!page) keys.push_back("page");
  if (!pack_limit || !pack_granule) keys.insert(keys.end(), {"pack_limit", "pack_granule"});
  if (!svm_oom_at && !svm_absent) keys.push_back("svm_oom_at");  // none to measure without SVM
  return keys;
}

device_profile observable(const device_profile& p, std::uint64_t capacity) {
  device_profile o = p;
  const std::uint64_t usable = capacity > p.headroom ? capacity - p.headroom : 0;
  o.headroom = capacity - usable / p.page * p.page;
  if (o.pack_limit != 0 && o.pack_granule == o.page) {
    o.pack_limit = 0;
    o.pack_granule = 1;
  }
  if (o.pack_limit != 0 && o.pack_limit >= o.page - o.pack_granule) o.pack_limit = o.page;
  return o;
}

}  // namespace clpool::probe
