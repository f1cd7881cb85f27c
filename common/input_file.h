// Small inputs read whole with a bound (profiles, .icd files, the first line of a file a tool may
// replace): a file that never ends (/dev/zero, a FIFO fed forever) or a huge one is an error
// naming the bound, after reading at most one byte more than it.
//
//   std::string error;
//   const std::optional<std::string> text = clpool::common::read_bounded(path, 64 * 1024, error);
//   if (!text) throw ...(path + ": " + error);   // "larger than 64 KiB", "No such file or
//   directory"
#ifndef CLPOOL_COMMON_INPUT_FILE_H_
#define CLPOOL_COMMON_INPUT_FILE_H_

#include <cstddef>
#include <optional>
#include <string>

namespace clpool::common {

// The whole of `path`, or nothing with `error` set (without the path): the OS's reason it cannot
// be opened or read, "is a directory", or "larger than N" when it holds more than `max_bytes`
// (N in the units of common/byte_size.h). Devices and FIFOs are read too, up to the bound; a FIFO
// with no writer reads as empty instead of blocking.
std::optional<std::string> read_bounded(const std::string& path, std::size_t max_bytes,
                                        std::string& error);

// The first line of `path` (without its '\n'; at most `max_bytes`, the rest of a longer line is
// not read), or nothing with `error` set as above.
std::optional<std::string> read_first_line(const std::string& path, std::size_t max_bytes,
                                           std::string& error);

// Why `path` cannot be an input that a tool opens more than once (clpool_replay's trace: its
// version first, then each replay; clpool.replay's): "" when it can, else the reason, to follow
// the path: "holds a NUL byte" (the OS would open the part before it), "is a directory", "is a
// FIFO (a named pipe): ..." or "is a socket: ..." (read once; opening a FIFO with no writer waits
// forever). Looks without opening. A path that does not exist or cannot be looked at is "" (its
// reader names the OS's reason); a device is "" too: it is read and judged by what it holds, as
// every input (/dev/zero: a trace that starts with NUL bytes).
std::string reread_input_refusal(const std::string& path);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_INPUT_FILE_H_
