// Whether a file is an OpenCL layer the loader can use: what `clpool record --layer` asks before
// it runs anything, so that a wrong path (a text file, an ordinary library such as libm) is
// refused instead of the program running unrecorded while the loader skips the "layer" in silence.
#ifndef CLPOOL_LAYER_API_LAYER_LIBRARY_H_
#define CLPOOL_LAYER_API_LAYER_LIBRARY_H_

#include <string>

namespace clpool::layer {

// The entry points every OpenCL layer exports (cl_khr_icd's layer interface); a loader skips a
// library that lacks one.
inline constexpr const char* layer_entry_points[] = {"clGetLayerInfo", "clInitLayer"};

// "" when `path` is a shared library (common/shared_library.h: its ELF headers lie within the
// file, and a child process can load it) that exports every layer_entry_points name, else why
// not, naming `flag` and the path: "--layer: '/etc/passwd' is not a loadable library (not an ELF
// shared library)", "--layer: 't.so' is not a loadable library (truncated or corrupt: ...)" or
// "--layer: '/lib/x86_64-linux-gnu/libm.so.6' is not an OpenCL layer: it does not export
// clGetLayerInfo, clInitLayer". `path` is a file: a name without '/' is one in the current
// directory, never a library dlopen would search for. Nothing is loaded into this process.
std::string layer_library_refusal(const std::string& flag, const std::string& path);

}  // namespace clpool::layer

#endif  // CLPOOL_LAYER_API_LAYER_LIBRARY_H_
