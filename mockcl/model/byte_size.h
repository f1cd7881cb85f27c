// Byte sizes as people write them: "4GiB", "512 MiB", "2688KiB", "1073741824".
#ifndef MOCKCL_MODEL_BYTE_SIZE_H_
#define MOCKCL_MODEL_BYTE_SIZE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clpool::device_model {

// Digits, optionally followed by B, KiB, MiB, GiB or TiB (case-insensitive; K, M, G, T alone
// mean the same binary units), surrounding spaces ignored. On anything else (empty, negative,
// fractional, an unknown unit, more than 2^64 - 1 bytes) returns nothing and says why in `why`
// ("is negative", ...), to be prefixed with the value's name by the caller.
std::optional<std::uint64_t> parse_byte_size(std::string_view text, std::string& why);

}  // namespace clpool::device_model

#endif  // MOCKCL_MODEL_BYTE_SIZE_H_
