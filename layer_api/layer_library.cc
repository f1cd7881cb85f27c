#include "layer_api/layer_library.h"

#include <dlfcn.h>

namespace clpool::layer {

std::string layer_library_refusal(const std::string& flag, const std::string& path) {
  // RTLD_LOCAL: the layer's symbols must not become the process's clGetPlatformIDs & co.
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return flag + ": '" + path + "' is not a loadable library (" + (why != nullptr ? why : "dlopen failed") + ")";
  }
  std::string missing;
  for (const char* name : layer_entry_points) {
    // dlsym on the handle finds only what this library (and its dependencies) define; a layer
    // defines its entry points itself.
    if (::dlsym(handle, name) == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  ::dlclose(handle);
  if (missing.empty()) return "";
  return flag + ": '" + path + "' is not an OpenCL layer: it does not export " + missing;
}

}  // namespace clpool::layer
