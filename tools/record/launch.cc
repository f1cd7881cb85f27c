#include "tools/record/launch.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "device_model/profile.h"
#include "layer_api/layer_settings.h"
#include "layer_api/trace_path.h"

extern char** environ;

namespace clpool::record {

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The layer that belongs with this binary: DIR/lib/libclpool_layer.so next to DIR/bin/clpool in
// an installation (tools/install.sh), or bazel-bin/tools/layer/ next to bazel-bin/tools/record/.
// Found from the executable's real path, so a symlink to it (runfiles, PATH) finds it too.
std::string find_layer(std::string& looked_in) {
  const std::string bin_dir = dir_of(real_path("/proc/self/exe"));
  for (const char* relative : {"/../lib/libclpool_layer.so", "/../layer/libclpool_layer.so"}) {
    const std::string candidate = bin_dir + relative;
    looked_in += (looked_in.empty() ? "" : ", ") + candidate;
    if (is_regular_file(candidate)) return real_path(candidate);
  }
  return "";
}

// PROGRAM as execvp would find it, or "" with `problem` saying why there is nothing to run: no
// such file, or a file that is there but cannot be executed (no execute permission, a directory),
// which is a different mistake with a different fix.
std::string resolve_program(const std::string& name, std::string& problem) {
  const auto runnable = [&](const std::string& candidate, std::string& why) {
    struct stat st;
    if (::stat(candidate.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) {
      why = "'" + candidate + "' is a directory";
    } else if (::access(candidate.c_str(), X_OK) != 0) {
      why = "'" + candidate + "' is not executable (" + std::strerror(errno) + ")";
    } else {
      return true;
    }
    return false;
  };
  if (name.empty()) {  // `-- ""`: not a directory of PATH, which a search would find first
    problem = "the program's name is empty";
    return "";
  }
  if (name.find('/') != std::string::npos) {
    if (runnable(name, problem)) return name;
    if (problem.empty()) problem = "no such program";
    return "";
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  std::string first_why;  // the first match that could not run, if nothing later can
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    std::string why;
    if (runnable(candidate, why)) return candidate;
    if (first_why.empty()) first_why = why;
    start = end + 1;
  }
  problem = first_why.empty() ? "no such program in PATH" : first_why;
  return "";
}

std::string program_profile(const std::string& profile) {
  return device_model::names_profile_file(profile) ? absolute(profile) : profile;
}

std::string absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

namespace {

// What stops the layer from opening `path` for appending (it creates a missing file), "" when
// nothing does. Checked without creating or changing anything, so a refusal leaves no trace.
std::string appendable_problem(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (::access(path.c_str(), W_OK) != 0)
      return std::string("cannot be written: ") + std::strerror(errno);
    // The layer appends only to a report (layer_api/trace_path.h): said before the program runs.
    if (!layer::report_path_refusal(path).empty())
      return "exists and is not a report the layer wrote: not appending to it";
    return "";
  }
  if (errno != ENOENT) return std::string("cannot be opened: ") + std::strerror(errno);
  const std::string dir = dir_of(creation_target(path));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "cannot be created in " + dir + ": " + std::strerror(errno);
  }
  return "";
}

}  // namespace

std::string creation_target(const std::string& path) {
  char link[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
  if (n <= 0) return path;
  const std::string target(link, static_cast<std::size_t>(n));
  return target[0] == '/' ? target : dir_of(path) + "/" + target;
}

std::string layer_environment(const std::string& layer, const std::vector<std::string>& settings,
                              const std::vector<std::string_view>& ours, const std::string& tool,
                              std::vector<std::string>& env) {
  std::string layers;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    for (std::string_view mine : ours) {
      if (name == mine)
        return name + " is set in the environment; " + tool + " sets it from its flags (unset it)";
    }
    // A report the layer cannot open hides every platform: the program would run for nothing.
    if (name == layer::env_report) {
      const std::string path = entry.substr(name.size() + 1);
      if (const std::string why = appendable_problem(path); !why.empty() && !path.empty()) {
        return std::string(layer::env_report) + " \"" + path + "\" " + why +
               " (the layer writes its report there; fix or unset it)";
      }
    }
    if (name == "OPENCL_LAYERS") {
      layers = entry.substr(name.size() + 1);
      continue;
    }
    env.push_back(entry);
  }
  std::size_t start = 0;
  while (start < layers.size()) {
    std::size_t end = layers.find(':', start);
    if (end == std::string::npos) end = layers.size();
    const std::string other = layers.substr(start, end - start);
    if (!other.empty() && real_path(other) == layer) {
      return "OPENCL_LAYERS already loads " + other + "; " + tool + " adds the layer itself";
    }
    start = end + 1;
  }
  while (!layers.empty() && layers.back() == ':') layers.pop_back();
  // ocl-icd and the Khronos loader make the last layer listed the outermost one.
  env.push_back("OPENCL_LAYERS=" + (layers.empty() ? layer : layers + ":" + layer));
  for (const std::string& s : settings) env.push_back(s);
  std::vector<const char*> entries;
  for (const std::string& e : env) entries.push_back(e.c_str());
  entries.push_back(nullptr);
  const layer::parse_result checked = layer::parse_layer_settings_from_environ(entries.data());
  return checked.ok() ? "" : checked.error_text();
}

}  // namespace clpool::record
