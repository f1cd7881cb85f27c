// Byte sizes as people write them: "4GiB", "512 MiB", "2688KiB", "256m", "1073741824", and as
// every tool prints them. The one size grammar and the one formatter of every tool
// (clpool_replay, the layer's variables, MOCKCL_DEVICES, profiles, clpool_probe); each tool
// prefixes a parse error's reason with the name of its flag or variable.
#ifndef CLPOOL_COMMON_BYTE_SIZE_H_
#define CLPOOL_COMMON_BYTE_SIZE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clpool::common {

// Digits, optionally followed by a unit: B, KiB, MiB, GiB, TiB, PiB or EiB (every unit
// format_bytes prints), or the short K, M, G, T, P, E for the same binary units; any case; spaces
// around the value and between number and unit ignored. Decimal units (KB, MB, GB, TB, PB, EB) are
// refused as ambiguous, with the binary unit to write instead. On anything else (empty, negative,
// fractional, an unknown unit, more than 2^64 - 1 bytes) returns nothing and says why in `why` ("is
// negative", ...), to be prefixed by the caller with the value's name and the text as typed:
// "--capacity: '2GB' is ambiguous: ...".
std::optional<std::uint64_t> parse_byte_size(std::string_view text, std::string& why);

// The largest device (its capacity) any tool accepts: 2^62 bytes. The trace format
// already treats larger sizes as corrupt, and sums of two such sizes cannot overflow.
inline constexpr std::uint64_t max_device_bytes = std::uint64_t{1} << 62;

// What a size must be beyond the grammar: a device's size (at most max_device_bytes: "is larger
// than the largest device, 2^62 bytes (4 EiB)"), and more than zero ("is zero").
struct size_rules {
  bool device = false;
  bool positive = false;
};

// parse_byte_size with `rules`. The one size check under every tool's own error convention:
// common/cli.h's size_option throws it as a usage error; mockcl's and the layer's parsers return
// it by value, each quoting the text its way.
std::optional<std::uint64_t> parse_size(std::string_view text, size_rules rules, std::string& why);

// How format_bytes_exact spells a unit. `joined` and `letter` are what configuration strings
// use, and parse_byte_size reads all three back to the same number.
enum class byte_units {
  spaced,  // "4 GiB", "1234567 B"            for people
  joined,  // "4GiB", "1234567"               clpool_replay's configuration names
  letter,  // "4g", "1234567"                 MOCKCL_DEVICES
};

// Bytes exactly, in the largest binary unit up to TiB that divides them: "1048 MiB", "4 GiB",
// "1234567 B". For answers that must not be rounded (a capacity, a minimum capacity).
std::string format_bytes_exact(std::uint64_t bytes, byte_units units = byte_units::spaced);

// Bytes for people, rounded: "4 GiB", "1.50 MiB", "123 B" (a size its unit divides gets no
// decimals), up to EiB.
std::string format_bytes(std::uint64_t bytes);

// Both, so that people can read it and scripts can grep it: "1.50 MiB (1572864 bytes)", and
// "123 bytes" below 1 KiB. How every report states an amount of memory (clpool_replay's text,
// the pytest plugin's failures).
std::string format_bytes_both(std::uint64_t bytes);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_BYTE_SIZE_H_
