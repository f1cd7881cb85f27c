#include "layer_api/trace_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace clpool::layer {

bool starts_with_layer_header(int fd) {
  char head[sizeof layer_header - 1] = {};
  return pread(fd, head, sizeof head, 0) == static_cast<ssize_t>(sizeof head) &&
         (std::memcmp(head, layer_header, sizeof head) == 0 ||
          std::memcmp(head, layer_header_v2, sizeof head) == 0 ||
          std::memcmp(head, layer_header_v3, sizeof head) == 0 ||
          std::memcmp(head, layer_header_v4, sizeof head) == 0);
}

std::string not_a_layer_trace(const std::string& path) {
  return "\"" + path +
         "\" exists and is not a trace the layer wrote: not overwriting it "
         "(remove it or choose another path)";
}

std::string trace_path_refusal(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return "";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const bool ours = fd >= 0 && starts_with_layer_header(fd);
  if (fd >= 0) ::close(fd);
  return ours ? "" : not_a_layer_trace(path);
}

std::string report_path_refusal(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return "";
  char head[16] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const ssize_t n = fd >= 0 ? pread(fd, head, sizeof head - 1, 0) : -1;
  if (fd >= 0) ::close(fd);
  const std::string first(head, n > 0 ? static_cast<std::size_t>(n) : 0);
  for (const char* word : {"alloc ", "first_use ", "injected ", "exit "}) {
    if (first.rfind(word, 0) == 0) return "";
  }
  return "\"" + path +
         "\" exists and is not a report the layer wrote: not appending to it "
         "(remove it or choose another path)";
}

}  // namespace clpool::layer
