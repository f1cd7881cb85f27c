#include "mockcl/compiler/build_options.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

namespace mockcl {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The words of `options`: split at whitespace outside quotes (a backslash escapes the next
// character), the quotes kept. False on a quote never closed.
bool split_words(std::string_view options, std::vector<std::string>& words) {
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < options.size(); ++i) {
    const char c = options[i];
    if (!quote && std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    word += c;
    if (c == '\\' && i + 1 < options.size()) {
      word += options[++i];
    } else if (quote ? c == quote : (c == '"' || c == '\'')) {
      quote = quote ? 0 : c;
    }
  }
  if (in_word) words.push_back(word);
  return quote == 0;
}

// OpenCL 3.0's -cl-... compiler options (5.8.6) and linker options (5.8.7), -cl-std= apart.
bool standard_cl_option(const std::string& w) {
  static const std::set<std::string> options = {
      "-cl-single-precision-constant",
      "-cl-denorms-are-zero",
      "-cl-fp32-correctly-rounded-divide-sqrt",
      "-cl-opt-disable",
      "-cl-strict-aliasing",
      "-cl-uniform-work-group-size",
      "-cl-no-subgroup-ifp",
      "-cl-mad-enable",
      "-cl-no-signed-zeros",
      "-cl-no-signed-zeroes",  // The linker options' spelling (5.8.7).
      "-cl-unsafe-math-optimizations",
      "-cl-finite-math-only",
      "-cl-fast-relaxed-math",
      "-cl-kernel-arg-info",
  };
  return options.count(w) != 0;
}

// Options compilers other than the standard's take, by prefix (build_options.h lists them).
bool common_option(const std::string& w) {
  for (std::string_view prefix : {"-g", "-W", "-O", "-f", "-save-temps", "-spir-std=", "-cl-nv-",
                                  "-nv-", "-cl-amd-", "-cl-intel-", "-cl-arm-"}) {
    if (starts_with(w, prefix)) return true;
  }
  return w == "-w";
}

// "-cl-std=CLx.y" names one of the device's OpenCL C versions.
bool supported_std(std::string_view value, const std::vector<cl_version>& c_versions) {
  if (value.size() != 5 || !starts_with(value, "CL") || value[3] != '.' ||
      !std::isdigit(static_cast<unsigned char>(value[2])) ||
      !std::isdigit(static_cast<unsigned char>(value[4])))
    return false;
  const cl_version v = CL_MAKE_VERSION(value[2] - '0', value[4] - '0', 0);
  return std::any_of(c_versions.begin(), c_versions.end(), [v](cl_version d) {
    return CL_VERSION_MAJOR(d) == CL_VERSION_MAJOR(v) && CL_VERSION_MINOR(d) == CL_VERSION_MINOR(v);
  });
}

}  // namespace

pp_macros build_macros(std::string_view options, const language_caps& caps) {
  const build_option_macros o = parse_build_options(options);
  pp_macros m;
  const int c_version = o.cl_std != 0 ? o.cl_std : 120;  // OpenCL C 1.2 unless -cl-std says
  m.object_like = {
      {"__OPENCL_VERSION__", "300"},
      {"__OPENCL_C_VERSION__", std::to_string(c_version)},
      {"CL_VERSION_1_0", "100"},
      {"CL_VERSION_1_1", "110"},
      {"CL_VERSION_1_2", "120"},
      {"CL_VERSION_2_0", "200"},
      {"CL_VERSION_3_0", "300"},
      {"__ENDIAN_LITTLE__", "1"},
      {"CHAR_BIT", "8"},
      {"SCHAR_MAX", "127"},
      {"SCHAR_MIN", "(-127-1)"},
      {"UCHAR_MAX", "255"},
      {"CHAR_MAX", "127"},
      {"CHAR_MIN", "(-127-1)"},
      {"SHRT_MAX", "32767"},
      {"SHRT_MIN", "(-32767-1)"},
      {"USHRT_MAX", "65535"},
      {"INT_MAX", "2147483647"},
      {"INT_MIN", "(-2147483647-1)"},
      {"UINT_MAX", "0xffffffffU"},
      {"LONG_MAX", "0x7fffffffffffffffL"},
      {"LONG_MIN", "(-0x7fffffffffffffffL-1)"},
      {"ULONG_MAX", "0xffffffffffffffffUL"},
      {"FLT_DIG", "6"},
      {"FLT_MANT_DIG", "24"},
      {"FLT_MAX_10_EXP", "38"},
      {"FLT_MAX_EXP", "128"},
      {"FLT_MIN_10_EXP", "(-37)"},
      {"FLT_MIN_EXP", "(-125)"},
      {"FLT_RADIX", "2"},
  };
  if (caps.images) m.object_like["__IMAGE_SUPPORT__"] = "1";
  std::string extensions = extension_string(caps);
  for (size_t start = 0; start < extensions.size();) {
    size_t end = extensions.find(' ', start);
    if (end == std::string::npos) end = extensions.size();
    if (end > start) m.object_like[extensions.substr(start, end - start)] = "1";
    start = end + 1;
  }
  if (c_version >= 300) {
    for (const cl_name_version& f : c_features(caps)) m.object_like[f.name] = "1";
  }
  for (const char* name : {"MAXFLOAT", "HUGE_VALF",   "INFINITY",     "NAN",       "FLT_MAX",
                           "FLT_MIN",  "FLT_EPSILON", "M_E_F",        "M_LOG2E_F", "M_LOG10E_F",
                           "M_LN2_F",  "M_LN10_F",    "M_PI_F",       "M_PI_2_F",  "M_PI_4_F",
                           "M_1_PI_F", "M_2_PI_F",    "M_2_SQRTPI_F", "M_SQRT2_F", "M_SQRT1_2_F"}) {
    m.opaque.insert(name);
  }
  if (caps.fp64) {
    for (const char* name : {"HUGE_VAL", "DBL_MAX", "DBL_MIN", "DBL_EPSILON", "M_E", "M_LOG2E",
                             "M_LOG10E", "M_LN2", "M_LN10", "M_PI", "M_PI_2", "M_PI_4", "M_1_PI",
                             "M_2_PI", "M_2_SQRTPI", "M_SQRT2", "M_SQRT1_2"}) {
      m.opaque.insert(name);
    }
    for (const auto& [name, value] : {std::pair<const char*, const char*>{"DBL_DIG", "15"},
                                      {"DBL_MANT_DIG", "53"},
                                      {"DBL_MAX_10_EXP", "308"},
                                      {"DBL_MAX_EXP", "1024"},
                                      {"DBL_MIN_10_EXP", "(-307)"},
                                      {"DBL_MIN_EXP", "(-1021)"}}) {
      m.object_like[name] = value;
    }
  }
  for (const auto& [name, value] : o.defines) {
    m.opaque.erase(name);
    m.object_like[name] = value;
  }
  for (const std::string& name : o.undefines) {
    m.object_like.erase(name);
    m.opaque.erase(name);
  }
  return m;
}

std::string invalid_build_option(std::string_view options,
                                 const std::vector<cl_version>& c_versions, bool linking) {
  std::vector<std::string> words;
  if (!split_words(options, words)) return "a quote in the options is never closed";
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    // Options whose argument may be the next word.
    if (w == "-D" || w == "-I" || w == "-U" || w == "-s" || w == "-x") {
      if (++i == words.size()) return "'" + w + "' needs an argument";
      continue;
    }
    if (starts_with(w, "-D") || starts_with(w, "-I") || starts_with(w, "-U")) continue;
    if (starts_with(w, "-cl-std=")) {
      if (!supported_std(std::string_view(w).substr(8), c_versions))
        return "'" + w + "' names an OpenCL C version the device does not support";
      continue;
    }
    if (standard_cl_option(w) || common_option(w)) continue;
    if (w == "-create-library" || w == "-enable-link-options") {
      if (linking) continue;
      return "'" + w + "' is a linker option, and clCompileProgram does not link";
    }
    if (w[0] != '-') return "'" + w + "' is no option nor an option's argument";
    return "'" + w + "' is not an OpenCL build option";
  }
  return "";
}

}  // namespace mockcl
