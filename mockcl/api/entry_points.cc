#include "mockcl/api/entry_points.h"

namespace mockcl {
namespace {
constexpr std::string_view kNames[] = {
#define MOCKCL_ENTRY(name) #name,
#include "mockcl/api/entry_points.inc"
#undef MOCKCL_ENTRY
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kEntryCount);
}  // namespace

std::string_view entry_name(entry_point e) { return kNames[static_cast<std::size_t>(e)]; }

std::optional<entry_point> entry_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kEntryCount; ++i) {
    if (kNames[i] == name) return static_cast<entry_point>(i);
  }
  return std::nullopt;
}

}  // namespace mockcl
