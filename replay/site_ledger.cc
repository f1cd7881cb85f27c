#include "replay/site_ledger.h"

#include <algorithm>

namespace clpool::replay {

void site_ledger::on_alloc(std::uint64_t id, std::uint64_t stack, std::uint64_t requested,
                           std::uint64_t rounded, std::uint64_t handle, bool awaits_use) {
  if (handle != 0) held_.erase(handle);
  const std::uint64_t committed =
      rounded == 0 ? 0 : device_model::profile_rounded(profile_, rounded);
  live_[id] = block{stack, requested, rounded, committed, handle, awaits_use};
}

void site_ledger::on_use(std::uint64_t id) {
  if (const auto it = live_.find(id); it != live_.end()) it->second.awaits_use = false;
}

void site_ledger::on_free(std::uint64_t id, bool pool_holds) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  if (pool_holds && it->second.handle != 0) held_[it->second.handle] = it->second;
  live_.erase(it);
}

void site_ledger::on_device_free(std::uint64_t handle) { held_.erase(handle); }

std::vector<site_usage> site_ledger::sum(const std::vector<const block*>& blocks) {
  std::unordered_map<std::uint64_t, site_usage> by_stack;
  for (const block* b : blocks) {
    site_usage& u = by_stack[b->stack];
    u.stack = b->stack;
    u.requested_bytes += b->requested;
    u.rounded_bytes += b->rounded;
    u.committed_bytes += b->committed;
    ++u.blocks;
  }
  std::vector<site_usage> out;
  out.reserve(by_stack.size());
  for (const auto& [stack, u] : by_stack) out.push_back(u);
  std::sort(out.begin(), out.end(), [](const site_usage& a, const site_usage& b) {
    return a.rounded_bytes != b.rounded_bytes ? a.rounded_bytes > b.rounded_bytes
                                              : a.stack < b.stack;
  });
  return out;
}

std::vector<site_usage> site_ledger::live_sites() const {
  std::vector<const block*> blocks;
  for (const auto& [id, b] : live_) {
    if (b.rounded != 0 && !b.awaits_use) blocks.push_back(&b);
  }
  return sum(blocks);
}

std::vector<site_usage> site_ledger::held_sites() const {
  std::vector<const block*> blocks;
  for (const auto& [handle, b] : held_) {
    if (!b.awaits_use) blocks.push_back(&b);
  }
  return sum(blocks);
}

}  // namespace clpool::replay
