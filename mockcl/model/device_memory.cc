#include "mockcl/model/device_memory.h"

namespace clpool::device_model {

device_memory::device_memory(const device_profile& profile, std::uint64_t capacity)
    : profile_(profile),
      exact_(profile.page == 1),
      capacity_(capacity),
      usable_(capacity > profile.headroom ? capacity - profile.headroom : 0) {
  validate_profile(profile_, profile_.name);
  if (profile_.pack_limit != 0) {
    granules_per_page_ = static_cast<std::uint32_t>(profile_.page / profile_.pack_granule);
  }
}

std::uint64_t device_memory::rounded(std::uint64_t bytes) const noexcept {
  const std::uint64_t page = profile_.page;
  if (bytes <= profile_.pack_limit) {
    const std::uint64_t g = profile_.pack_granule;
    return (bytes + g - 1) / g * g;
  }
  const std::uint64_t pages = bytes / page + (bytes % page != 0);
  return pages > ~std::uint64_t{0} / page ? ~std::uint64_t{0} : pages * page;
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
  std::uint32_t p;
  const auto fit = with_room_.lower_bound({granules, 0});
  if (fit != with_room_.end()) {
    p = fit->second;
    pages_[p].entry = with_room_.extract(fit);
  } else {
    if (page > usable_ || committed_ > usable_ - page) return false;
    if (!closed_pages_.empty()) {
      p = closed_pages_.back();
      closed_pages_.pop_back();
    } else {
      p = static_cast<std::uint32_t>(pages_.size());
      pages_.emplace_back();
      pages_[p].entry = with_room_.extract(with_room_.emplace(0, p).first);
      closed_pages_.reserve(pages_.size());  // release pushes here and must not allocate
    }
    pages_[p].free_granules = granules_per_page_;
    pages_[p].open = true;
    ++shared_open_;
    add_committed(page);
  }
  shared_page& pg = pages_[p];
  pg.free_granules -= granules;
  if (pg.free_granules > 0) {
    pg.entry.value() = {pg.free_granules, p};
    with_room_.insert(std::move(pg.entry));
  }
  out.whole = 0;
  out.page = p;
  out.granules = granules;
  requested_ += bytes;
  return true;
}

void device_memory::release_shared(const placement& pl) noexcept {
  shared_page& pg = pages_[pl.page];
  if (pg.free_granules > 0) pg.entry = with_room_.extract({pg.free_granules, pl.page});
  pg.free_granules += pl.granules;
  if (pg.free_granules == granules_per_page_) {
    // Empty: the driver gives the page back at once.
    pg.open = false;
    --shared_open_;
    committed_ -= profile_.page;
    closed_pages_.push_back(pl.page);
    return;
  }
  pg.entry.value() = {pg.free_granules, pl.page};
  with_room_.insert(std::move(pg.entry));
}

bool device_memory::state_is_valid() const {
  if (peak_ < committed_) return false;
  if (exact_) return whole_ == committed_ && requested_ == committed_ && pages_.empty();
  std::uint64_t open = 0, with_room = 0;
  for (std::uint32_t p = 0; p < pages_.size(); ++p) {
    const shared_page& pg = pages_[p];
    if (!pg.open) continue;
    ++open;
    if (pg.free_granules >= granules_per_page_) return false;  // an empty page is closed
    if (pg.free_granules > 0) {
      ++with_room;
      if (with_room_.count({pg.free_granules, p}) != 1 || !pg.entry.empty()) return false;
    } else if (pg.entry.empty()) {
      return false;
    }
  }
  return open == shared_open_ && with_room == with_room_.size() &&
         committed_ == whole_ + shared_open_ * profile_.page && requested_ <= committed_;
}

}  // namespace clpool::device_model
