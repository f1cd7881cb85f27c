#include "trace/library_frames.h"

#include <algorithm>
#include <cstddef>

namespace clpool::trace {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The directories of `file`, outermost first, and its base name.
struct split_path {
  std::vector<std::string_view> dirs;
  std::string_view base;
};

split_path split(std::string_view file) {
  split_path out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = file.find('/', start);
    if (slash == std::string_view::npos) {
      out.base = file.substr(start);
      return out;
    }
    if (slash > start) out.dirs.push_back(file.substr(start, slash - start));
    start = slash + 1;
  }
}

bool is_known_package(std::string_view dir) {
  return std::find(std::begin(kLibraryPackages), std::end(kLibraryPackages), dir) !=
         std::end(kLibraryPackages);
}

// site-packages, dist-packages, a known package's directory or its wheel's PACKAGE.libs.
bool in_installed_package(const split_path& p) {
  for (std::string_view d : p.dirs) {
    if (d == "site-packages" || d == "dist-packages" || is_known_package(d)) return true;
    if (ends_with(d, ".libs") && is_known_package(d.substr(0, d.size() - 5))) return true;
  }
  return false;
}

// lib/python3.11/, lib64/python3/: a Python installation's standard library.
bool in_standard_library(const split_path& p) {
  for (std::size_t i = 1; i < p.dirs.size(); ++i) {
    if ((p.dirs[i - 1] == "lib" || p.dirs[i - 1] == "lib64") && starts_with(p.dirs[i], "python"))
      return true;
  }
  return false;
}

bool is_extension_module(std::string_view base) {
  return (base.find(".cpython-") != std::string_view::npos &&
          base.find(".so") != std::string_view::npos) ||
         ends_with(base, ".abi3.so");
}

bool is_runtime_library(std::string_view base) {
  constexpr std::string_view kPrefixes[] = {
      "libOpenCL.so", "libpocl.so",         "libnvidia-opencl.so", "libcuda.so",
      "libamdocl",    "libigdrcl.so",       "libpython",           "python",
      "linux-vdso",   "libclpool_layer.so", "libmockcl.so",
  };
  for (std::string_view p : kPrefixes) {
    if (starts_with(base, p)) return true;
  }
  return false;
}

}  // namespace

bool in_clpool_package(const frame_info& f) {
  const split_path p = split(f.file);
  if (p.dirs.empty() || p.dirs.back() != "clpool") return false;
  if (f.lang == frame_lang::python) return ends_with(p.base, ".py");
  return starts_with(p.base, "_core.") &&
         (ends_with(p.base, ".so") || p.base.find(".so.") != std::string_view::npos);
}

bool is_library_frame(const frame_info& f, const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    if (glob_match(pattern, f.file)) return true;
  }
  if (in_clpool_package(f)) return true;
  const split_path p = split(f.file);
  if (f.lang == frame_lang::python) {
    return starts_with(f.file, "<frozen") || in_installed_package(p) || in_standard_library(p);
  }
  return starts_with(f.file, "/lib/") || starts_with(f.file, "/lib64/") ||
         starts_with(f.file, "/usr/lib/") || starts_with(f.file, "/usr/lib64/") ||
         in_installed_package(p) || is_extension_module(p.base) || is_runtime_library(p.base) ||
         f.file.find("/bin/python") != std::string::npos;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative wildcard matching with one backtrack point: linear in practice, no recursion.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string library_pattern_error(std::string_view pattern) {
  if (pattern.empty()) return "a pattern must not be empty";
  if (pattern.size() > max_frame_text) return "a pattern must be at most 600 bytes";
  for (const char c : pattern) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return "a pattern must not hold control characters";
    }
  }
  return {};
}

}  // namespace clpool::trace
