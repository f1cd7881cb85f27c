#include "device_model/device_memory.h"

namespace clpool::device_model {

device_memory::device_memory(const device_profile& profile, std::uint64_t capacity)
    : profile_(profile),
      exact_(profile.page == 1),
      capacity_(capacity),
      usable_(capacity > profile.headroom ? capacity - profile.headroom : 0) {
  validate_profile_values(profile_, profile_.name);
  if (profile_.pack_limit != 0) {
    granules_per_page_ = static_cast<std::uint32_t>(profile_.page / profile_.pack_granule);
    by_room_.assign(granules_per_page_, placement::no_page);
    has_room_.assign(granules_per_page_ / 64 + 1, 0);
  }
}

void device_memory::add_room(std::uint32_t p) noexcept {
  shared_page& pg = pages_[p];
  const std::uint32_t g = pg.free_granules;
  pg.newer = placement::no_page;
  pg.older = by_room_[g];
  if (pg.older != placement::no_page) pages_[pg.older].newer = p;
  by_room_[g] = p;
  has_room_[g / 64] |= std::uint64_t{1} << (g % 64);
}

void device_memory::remove_room(std::uint32_t p) noexcept {
  shared_page& pg = pages_[p];
  const std::uint32_t g = pg.free_granules;
  if (pg.newer != placement::no_page)
    pages_[pg.newer].older = pg.older;
  else
    by_room_[g] = pg.older;
  if (pg.older != placement::no_page) pages_[pg.older].newer = pg.newer;
  pg.newer = pg.older = placement::no_page;
  if (by_room_[g] == placement::no_page) has_room_[g / 64] &= ~(std::uint64_t{1} << (g % 64));
}

std::uint32_t device_memory::best_fit(std::uint32_t granules) const noexcept {
  std::size_t word = granules / 64;
  std::uint64_t bits = has_room_[word] & (~std::uint64_t{0} << (granules % 64));
  while (bits == 0) {
    if (++word == has_room_.size()) return placement::no_page;
    bits = has_room_[word];
  }
  return by_room_[word * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits))];
}

std::uint64_t device_memory::rounded(std::uint64_t bytes) const noexcept {
  return profile_rounded(profile_, bytes);
}

bool device_memory::fits(std::uint64_t bytes) const noexcept {
  if (exact_ || bytes > profile_.pack_limit) {
    const std::uint64_t need = rounded(bytes);  // exact bytes, or whole pages
    return need <= usable_ && committed_ <= usable_ - need;
  }
  // A shared request fits in a page with room, or in a new page.
  const auto granules =
      static_cast<std::uint32_t>((bytes + profile_.pack_granule - 1) / profile_.pack_granule);
  if (best_fit(granules) != placement::no_page) return true;
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
  std::uint32_t p = best_fit(granules);
  if (p != placement::no_page) {
    remove_room(p);
  } else {
    if (page > usable_ || committed_ > usable_ - page) return false;
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
    ++shared_open_;
    add_committed(page);
  }
  pages_[p].free_granules -= granules;
  if (pages_[p].free_granules > 0) add_room(p);
  out.whole = 0;
  out.page = p;
  out.granules = granules;
  requested_ += bytes;
  return true;
}

void device_memory::release_shared(const placement& pl) noexcept {
  shared_page& pg = pages_[pl.page];
  if (pg.free_granules > 0) remove_room(pl.page);
  pg.free_granules += pl.granules;
  if (pg.free_granules == granules_per_page_) {
    // Empty: the driver gives the page back at once.
    pg.open = false;
    --shared_open_;
    committed_ -= profile_.page;
    closed_pages_.push_back(pl.page);
    return;
  }
  add_room(pl.page);
}

bool device_memory::state_is_valid() const {
  if (peak_ < committed_) return false;
  if (exact_) return whole_ == committed_ && requested_ == committed_ && pages_.empty();
  std::uint64_t open = 0, with_room = 0;
  for (const shared_page& pg : pages_) {
    if (!pg.open) continue;
    ++open;
    if (pg.free_granules >= granules_per_page_) return false;  // an empty page is closed
    with_room += pg.free_granules > 0;
  }
  // Every list holds pages with exactly its amount of room, linked both ways; the bitmap agrees.
  std::uint64_t listed = 0;
  for (std::uint32_t g = 0; g < by_room_.size(); ++g) {
    const bool bit = (has_room_[g / 64] >> (g % 64)) & 1;
    if (bit != (by_room_[g] != placement::no_page) || (g == 0 && bit)) return false;
    std::uint32_t newer = placement::no_page;
    for (std::uint32_t p = by_room_[g]; p != placement::no_page; p = pages_[p].older) {
      if (!pages_[p].open || pages_[p].free_granules != g || pages_[p].newer != newer) return false;
      if (++listed > with_room) return false;
      newer = p;
    }
  }
  return open == shared_open_ && listed == with_room &&
         committed_ == whole_ + shared_open_ * profile_.page && requested_ <= committed_;
}

}  // namespace clpool::device_model
