#include "device_model/device_memory.h"

#include <iterator>

namespace clpool::device_model {

device_memory::device_memory(const device_profile& profile, std::uint64_t capacity)
    : profile_(profile),
      exact_(profile.page == 1),
      capacity_(capacity),
      usable_(capacity > profile.headroom ? capacity - profile.headroom : 0) {
  validate_profile_values(profile_, profile_.name);
  if (profile_.pack_limit != 0) {
    granules_per_page_ = static_cast<std::uint32_t>(profile_.page / profile_.pack_granule);
  }
}

// Set insertions may throw std::bad_alloc; release is noexcept, so one there ends the program
// (as any allocation failure inside a destructor would).
void device_memory::add_run(const run& r) {
  runs_.insert(r);
  places_.insert(r);
}

void device_memory::remove_run(const run& r) noexcept {
  runs_.erase(r);
  places_.erase(r);
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
  if (runs_.lower_bound(run{granules, 0, 0}) != runs_.end()) return true;
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
  run place{granules_per_page_, 0, 0};
  const auto best = runs_.lower_bound(run{granules, 0, 0});
  if (best != runs_.end()) {
    place = *best;
    remove_run(place);
  } else {
    if (page > usable_ || committed_ > usable_ - page) return false;
    if (!closed_pages_.empty()) {
      place.page = closed_pages_.back();
      closed_pages_.pop_back();
    } else {
      place.page = static_cast<std::uint32_t>(pages_.size());
      pages_.emplace_back();
      closed_pages_.reserve(pages_.size());  // release pushes here and must not allocate
    }
    pages_[place.page].free_granules = granules_per_page_;
    pages_[place.page].open = true;
    ++shared_open_;
    add_committed(page);
  }
  if (place.granules > granules)
    add_run(run{place.granules - granules, place.page, place.offset + granules});
  pages_[place.page].free_granules -= granules;
  out.whole = 0;
  out.page = place.page;
  out.granules = granules;
  out.offset = place.offset;
  requested_ += bytes;
  return true;
}

void device_memory::release_shared(const placement& pl) noexcept {
  shared_page& pg = pages_[pl.page];
  pg.free_granules += pl.granules;
  if (pg.free_granules == granules_per_page_) {
    // Empty: the driver gives the page back at once, and its runs (the rest of it) go.
    for (auto it = places_.lower_bound(run{0, pl.page, 0});
         it != places_.end() && it->page == pl.page; it = places_.lower_bound(run{0, pl.page, 0}))
      remove_run(*it);
    pg.open = false;
    --shared_open_;
    committed_ -= profile_.page;
    closed_pages_.push_back(pl.page);
    return;
  }
  run joined{pl.granules, pl.page, pl.offset};
  auto after = places_.lower_bound(joined);
  if (after != places_.end() && after->page == pl.page &&
      after->offset == pl.offset + pl.granules) {
    const run r = *after;
    joined.granules += r.granules;
    remove_run(r);
    after = places_.lower_bound(joined);
  }
  if (after != places_.begin()) {
    const run before = *std::prev(after);
    if (before.page == pl.page && before.offset + before.granules == pl.offset) {
      joined.offset = before.offset;
      joined.granules += before.granules;
      remove_run(before);
    }
  }
  add_run(joined);
}

bool device_memory::state_is_valid() const {
  if (peak_ < committed_) return false;
  if (exact_) return whole_ == committed_ && requested_ == committed_ && pages_.empty();
  // Every open page is partly used, and its free granules are its runs, which never touch.
  std::vector<std::uint64_t> free_in(pages_.size(), 0);
  const run* prev = nullptr;
  for (const run& r : places_) {
    if (r.page >= pages_.size() || !pages_[r.page].open || r.granules == 0 ||
        r.offset + r.granules > granules_per_page_ || runs_.count(r) != 1)
      return false;
    if (prev != nullptr && prev->page == r.page && prev->offset + prev->granules >= r.offset)
      return false;
    free_in[r.page] += r.granules;
    prev = &r;
  }
  std::uint64_t open = 0;
  for (std::size_t p = 0; p < pages_.size(); ++p) {
    if (!pages_[p].open) continue;
    ++open;
    if (pages_[p].free_granules >= granules_per_page_) return false;  // an empty page is closed
    if (free_in[p] != pages_[p].free_granules) return false;
  }
  return runs_.size() == places_.size() && open == shared_open_ &&
         committed_ == whole_ + shared_open_ * profile_.page && requested_ <= committed_;
}

}  // namespace clpool::device_model
