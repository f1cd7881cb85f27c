// Small inputs read whole with a bound (profiles, .icd files, the first line of a file a tool may
// replace): a file that never ends (/dev/zero, a FIFO fed forever) or a huge one is an error
// naming the bound, after reading at most one byte more than it.
//
//   std::string error;
//   const std::optional<std::string> text = clpool::common::read_bounded(path, 64 * 1024, error);
//   if (!text) throw ...(path + ": " + error);   // "larger than 64 KiB", "No such file or directory"
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
std::optional<std::string> read_bounded(const std::string& path, std::size_t max_bytes, std::string& error);

// The first line of `path` (without its '\n'; at most `max_bytes`, the rest of a longer line is
// not read), or nothing with `error` set as above.
std::optional<std::string> read_first_line(const std::string& path, std::size_t max_bytes, std::string& error);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_INPUT_FILE_H_
