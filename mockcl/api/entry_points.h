// Names of the OpenCL entry points mockcl knows about: exactly the slots of the ICD dispatch
// table. Counters, fault rules and the call log index them by `Entry`.
#ifndef MOCKCL_API_ENTRY_POINTS_H_
#define MOCKCL_API_ENTRY_POINTS_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace mockcl {

// One enumerator per dispatch slot, in table order.
enum class entry_point : int {
#define MOCKCL_ENTRY(name) name,
#include "mockcl/api/entry_points.inc"
#undef MOCKCL_ENTRY
  count
};

inline constexpr std::size_t kEntryCount = static_cast<std::size_t>(entry_point::count);

// The entry point's OpenCL name, e.g. "clCreateBuffer".
std::string_view entry_name(entry_point e);

// The entry whose name is `name` exactly, or nullopt (used to validate fault rules).
std::optional<entry_point> entry_from_name(std::string_view name);

}  // namespace mockcl

#endif  // MOCKCL_API_ENTRY_POINTS_H_
