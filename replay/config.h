// Replay configurations as users type them (sizes in them: common/cli.h's size_option).
//
//   parse_config("pool:lb=2,trim-ratio=0.5")      -> the pool, 2 leading bits, trim at 0.5 x active
//   parse_config("nopool")                        -> every request goes straight to the device
#ifndef CLPOOL_REPLAY_CONFIG_H_
#define CLPOOL_REPLAY_CONFIG_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/byte_size.h"
#include "pool/bins.h"
#include "pool/errors.h"
#include "pool/pool_types.h"

namespace clpool::replay {

// A value a user typed is malformed. what() says which value and why.
class config_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Bytes for people, rounded ("1.50 MiB") or exact ("1048 MiB"): the one formatter of
// common/byte_size.h.
using common::format_bytes;
using common::format_bytes_exact;

// How a trace is replayed: through the pool, configured, or straight onto the device.
struct replay_config {
  bool use_pool = true;
  unsigned leading_bits = default_leading_bits;
  std::uint64_t limit = unlimited;
  trim_policy trim = {};
  // alloc=immediate: the pool's allocator commits each new buffer as it makes it (PyOpenCL's
  // ImmediateAllocator, pool/opencl's immediate_buffer_allocator: create, then migrate), so on a
  // device that defers allocation to first use a buffer that does not fit fails inside the pool's
  // allocation, which frees what it holds and retries. Default (alloc=device): the device
  // commits it where it does (PyOpenCL's DeferredAllocator), and on a deferred device the pool
  // never sees the failure.
  bool immediate_allocator = false;
};

// Parses "nopool", "pool" or "pool:KEY=VALUE,..." with keys lb (0-12), limit (bytes),
// trim-max-held (bytes), trim-ratio (a finite number >= 0), alloc (device or immediate). Throws
// config_error naming the problem: unknown key, repeated key, bad value, options on nopool.
replay_config parse_config(std::string_view text);

// A trim ratio as both --trim-ratio and a configuration's trim-ratio= take it: a finite decimal
// number >= 0 ("0.5", "2", "1e-3"), the whole text; nullopt for anything else ("0x1p-1", " 0.5",
// "nan", "-1", "").
std::optional<double> parse_ratio(std::string_view text);

// The canonical text of a config, which parse_config() reads back: "nopool", "pool:lb=4",
// "pool:lb=2,limit=1GiB,trim-ratio=0.5".
std::string to_string(const replay_config& config);

}  // namespace clpool::replay

#endif  // CLPOOL_REPLAY_CONFIG_H_
