// Byte sizes as people write them: "4GiB", "512 MiB", "2688KiB", "256m", "1073741824".
// The one size grammar of every tool (clpool_replay, the layer's variables, MOCKCL_DEVICES,
// profiles, clpool_probe); each tool prefixes the reason with the name of its flag or variable.
#ifndef CLPOOL_COMMON_BYTE_SIZE_H_
#define CLPOOL_COMMON_BYTE_SIZE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clpool::common {

// Digits, optionally followed by a unit: B, KiB, MiB, GiB or TiB, or the short K, M, G, T for the
// same binary units; any case; spaces around the value and between number and unit ignored.
// Decimal units (KB, MB, GB, TB) are refused as ambiguous, with the binary unit to write instead.
// On anything else (empty, negative, fractional, an unknown unit, more than 2^64 - 1 bytes)
// returns nothing and says why in `why` ("is negative", ...), to be prefixed by the caller with
// the value's name and the text as typed: "--capacity: '2GB' is ambiguous: ...".
std::optional<std::uint64_t> parse_byte_size(std::string_view text, std::string& why);

// The largest device (its capacity) any tool accepts: 2^62 bytes. The trace format
// already treats larger sizes as corrupt, and sums of two such sizes cannot overflow.
inline constexpr std::uint64_t max_device_bytes = std::uint64_t{1} << 62;

// parse_byte_size, then refuses a size above max_device_bytes ("is larger than the largest
// device, 2^62 bytes (4 EiB)").
std::optional<std::uint64_t> parse_device_size(std::string_view text, std::string& why);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_BYTE_SIZE_H_
