#include "layer_api/layer_library.h"

#include <vector>

#include "common/shared_library.h"

namespace clpool::layer {

std::string layer_library_refusal(const std::string& flag, const std::string& path) {
  // A path, never a name for dlopen's search: `--layer l.so` is the file in this directory.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  const std::vector<std::string> names(std::begin(layer_entry_points),
                                       std::end(layer_entry_points));
  // The file's headers first (a library cut short kills dlopen with SIGBUS), then a load in a
  // child process, as the loader will load it in the program (initialisers run, but not here).
  std::string why = common::shared_library_refusal(file, names);
  if (why.empty()) why = common::trial_load_refusal(file, names);
  if (why.empty()) return "";
  if (why.rfind("does not export ", 0) == 0) {
    return flag + ": '" + path + "' is not an OpenCL layer: it " + why;
  }
  if (why.rfind("is ", 0) == 0) why.erase(0, 3);
  return flag + ": '" + path + "' is not a loadable library (" + why + ")";
}

}  // namespace clpool::layer
