#include "device_model/device_memory.h"

#include <algorithm>

namespace clpool::device_model {

device_memory::device_memory(const device_profile& profile, std::uint64_t capacity)
    : profile_(profile),
      exact_(profile.page == 1),
      capacity_(capacity),
      usable_(capacity > profile.headroom ? capacity - profile.headroom : 0) {
  validate_profile_values(profile_, profile_.name);
  if (profile_.pack_limit != 0) {
    granules_per_page_ = static_cast<std::uint32_t>(profile_.page / profile_.pack_granule);
    oldest_of_size_.assign(granules_per_page_ + 1, no_run);
    newest_of_size_.assign(granules_per_page_ + 1, no_run);
    has_size_.assign(granules_per_page_ / 64 + 1, 0);
  }
}

void device_memory::link(std::uint32_t r) noexcept {
  run& x = runs_[r];
  const std::uint32_t g = x.granules;
  x.newer = no_run;
  x.older = newest_of_size_[g];
  if (x.older != no_run)
    runs_[x.older].newer = r;
  else
    oldest_of_size_[g] = r;
  newest_of_size_[g] = r;
  has_size_[g / 64] |= std::uint64_t{1} << (g % 64);
}

void device_memory::unlink(std::uint32_t r) noexcept {
  run& x = runs_[r];
  const std::uint32_t g = x.granules;
  if (x.newer != no_run)
    runs_[x.newer].older = x.older;
  else
    newest_of_size_[g] = x.older;
  if (x.older != no_run)
    runs_[x.older].newer = x.newer;
  else
    oldest_of_size_[g] = x.newer;
  x.newer = x.older = no_run;
  if (oldest_of_size_[g] == no_run) has_size_[g / 64] &= ~(std::uint64_t{1} << (g % 64));
}

std::uint32_t device_memory::best_fit(std::uint32_t granules) const noexcept {
  std::size_t word = granules / 64;
  std::uint64_t bits = has_size_[word] & (~std::uint64_t{0} << (granules % 64));
  while (bits == 0) {
    if (++word == has_size_.size()) return no_run;
    bits = has_size_[word];
  }
  return oldest_of_size_[word * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits))];
}

// A run in a slot of runs_, linked in its size's list (not yet in its page's list). Never
// allocates: the slots were reserved by try_commit_paged.
std::uint32_t device_memory::new_run(std::uint32_t granules, std::uint32_t page,
                                     std::uint32_t offset) noexcept {
  std::uint32_t r;
  if (!spare_runs_.empty()) {
    r = spare_runs_.back();
    spare_runs_.pop_back();
  } else {
    r = static_cast<std::uint32_t>(runs_.size());
    runs_.emplace_back();  // within the reserved capacity
  }
  runs_[r].granules = granules;
  runs_[r].page = page;
  runs_[r].offset = offset;
  link(r);
  return r;
}

void device_memory::drop_run(std::uint32_t r) noexcept {
  unlink(r);
  spare_runs_.push_back(r);  // within the reserved capacity
}

std::uint64_t device_memory::rounded(std::uint64_t bytes) const noexcept {
  return profile_rounded(profile_, bytes);
}

bool device_memory::fits(std::uint64_t bytes) const noexcept {
  if (exact_ || bytes > profile_.pack_limit) {
    const std::uint64_t need = rounded(bytes);  // exact bytes, or whole pages
    return need <= usable_ && committed_ <= usable_ - need;
  }
  // A shared request fits in a free run of a shared page, or in a new page.
  const auto granules =
      static_cast<std::uint32_t>((bytes + profile_.pack_granule - 1) / profile_.pack_granule);
  if (best_fit(granules) != no_run) return true;
  return profile_.page <= usable_ && committed_ <= usable_ - profile_.page;
}

bool device_memory::try_commit_paged(std::uint64_t bytes, placement& out) {
  const std::uint64_t page = profile_.page;
  if (bytes > profile_.pack_limit) {
    const std::uint64_t need = rounded(bytes);
    if (need > usable_ || committed_ > usable_ - need) return false;
    out.whole = need;
    out.page = placement::no_page;
    out.granules = 0;
    whole_ += need;
    add_committed(need);
    requested_ += bytes;
    return true;
  }
  const std::uint32_t granules =
      static_cast<std::uint32_t>((bytes + profile_.pack_granule - 1) / profile_.pack_granule);
  const std::uint32_t r = best_fit(granules);
  if (r == no_run && (page > usable_ || committed_ > usable_ - page)) return false;
  // Room for what a release may add: runs never outnumber the shared requests plus the pages
  // (a page with k requests has at most k + 1 runs). Reserved now, while allocating may fail.
  const std::size_t most_runs = shared_requests_ + 1 + shared_open_ + 1;
  if (runs_.capacity() < most_runs) runs_.reserve(2 * most_runs);
  if (spare_runs_.capacity() < runs_.capacity()) spare_runs_.reserve(runs_.capacity());
  std::uint32_t p, offset;
  if (r != no_run) {
    p = runs_[r].page;
    offset = runs_[r].offset;
    if (runs_[r].granules > granules) {
      // The rest of the run stays in place in its page's list, now the newest of its size.
      unlink(r);
      runs_[r].granules -= granules;
      runs_[r].offset += granules;
      link(r);
    } else {
      std::vector<std::uint32_t>& list = pages_[p].runs;
      list.erase(std::find(list.begin(), list.end(), r));
      drop_run(r);
    }
  } else {
    if (!closed_pages_.empty()) {
      p = closed_pages_.back();
      closed_pages_.pop_back();
    } else {
      p = static_cast<std::uint32_t>(pages_.size());
      pages_.emplace_back();
      closed_pages_.reserve(pages_.size());  // release pushes here and must not allocate
    }
    pages_[p].free_granules = granules_per_page_;
    pages_[p].open = true;
    pages_[p].runs.clear();
    ++shared_open_;
    add_committed(page);
    offset = 0;
    if (granules < granules_per_page_)
      pages_[p].runs.push_back(new_run(granules_per_page_ - granules, p, granules));
  }
  shared_page& pg = pages_[p];
  pg.free_granules -= granules;
  ++pg.requests;
  ++shared_requests_;
  if (pg.runs.capacity() < pg.requests + 1) pg.runs.reserve(2 * (pg.requests + 1));
  out.whole = 0;
  out.page = p;
  out.granules = granules;
  out.offset = offset;
  requested_ += bytes;
  return true;
}

void device_memory::release_shared(const placement& pl) noexcept {
  shared_page& pg = pages_[pl.page];
  pg.free_granules += pl.granules;
  --pg.requests;
  --shared_requests_;
  std::vector<std::uint32_t>& list = pg.runs;
  if (pg.free_granules == granules_per_page_) {
    // Empty: the driver gives the page back at once, and its runs (the rest of it) go.
    for (std::uint32_t r : list) drop_run(r);
    list.clear();
    pg.open = false;
    --shared_open_;
    committed_ -= profile_.page;
    closed_pages_.push_back(pl.page);
    return;
  }
  // The runs before and after the released granules, and whether they touch them.
  const auto after = std::lower_bound(
      list.begin(), list.end(), pl.offset,
      [this](std::uint32_t r, std::uint32_t offset) { return runs_[r].offset < offset; });
  const bool join_after = after != list.end() && runs_[*after].offset == pl.offset + pl.granules;
  const bool join_before = after != list.begin() &&
                           runs_[*(after - 1)].offset + runs_[*(after - 1)].granules == pl.offset;
  if (join_before) {
    const std::uint32_t r = *(after - 1);
    unlink(r);
    runs_[r].granules += pl.granules;
    if (join_after) {
      runs_[r].granules += runs_[*after].granules;
      drop_run(*after);
      list.erase(after);
    }
    link(r);
  } else if (join_after) {
    const std::uint32_t r = *after;
    unlink(r);
    runs_[r].granules += pl.granules;
    runs_[r].offset = pl.offset;
    link(r);
  } else {
    list.insert(after, new_run(pl.granules, pl.page, pl.offset));  // within the reserved capacity
  }
}

bool device_memory::state_is_valid() const {
  if (peak_ < committed_) return false;
  if (exact_) return whole_ == committed_ && requested_ == committed_ && pages_.empty();
  // Every open page is partly used; its free granules are its runs, by offset, never touching.
  std::uint64_t open = 0, listed_runs = 0, requests = 0;
  for (std::uint32_t p = 0; p < pages_.size(); ++p) {
    const shared_page& pg = pages_[p];
    if (!pg.open) {
      if (!pg.runs.empty() || pg.requests != 0) return false;
      continue;
    }
    ++open;
    requests += pg.requests;
    if (pg.free_granules >= granules_per_page_ || pg.requests == 0) return false;
    if (pg.runs.size() > pg.requests + 1) return false;
    std::uint64_t free = 0, end = 0;
    for (std::size_t i = 0; i < pg.runs.size(); ++i) {
      const run& x = runs_[pg.runs[i]];
      if (x.page != p || x.granules == 0 || x.offset + x.granules > granules_per_page_)
        return false;
      if (i > 0 && x.offset <= end) return false;  // out of order, overlapping or touching
      end = x.offset + x.granules;
      free += x.granules;
    }
    if (free != pg.free_granules) return false;
    listed_runs += pg.runs.size();
  }
  // The size lists hold exactly those runs, each in its size's list, linked both ways.
  std::uint64_t indexed = 0;
  for (std::uint32_t g = 0; g < oldest_of_size_.size(); ++g) {
    const bool bit = (has_size_[g / 64] >> (g % 64)) & 1;
    if (bit != (oldest_of_size_[g] != no_run) || (g == 0 && bit)) return false;
    std::uint32_t older = no_run;
    for (std::uint32_t r = oldest_of_size_[g]; r != no_run; r = runs_[r].newer) {
      if (runs_[r].granules != g || runs_[r].older != older || ++indexed > listed_runs)
        return false;
      older = r;
    }
    if (newest_of_size_[g] != older) return false;
  }
  return indexed == listed_runs && open == shared_open_ && requests == shared_requests_ &&
         listed_runs + spare_runs_.size() == runs_.size() &&
         committed_ == whole_ + shared_open_ * profile_.page && requested_ <= committed_;
}

}  // namespace clpool::device_model
