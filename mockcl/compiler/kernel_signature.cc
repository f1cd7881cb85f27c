#include "mockcl/compiler/kernel_signature.h"

#include "mockcl/compiler/kernel_source.h"
#include "mockcl/compiler/pp_conditionals.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace mockcl {
namespace {

std::string at_line(int line) { return "<source>:" + std::to_string(line) + ": error: "; }

// Parentheses, brackets and braces balance (the first unmatched one's line, else 0).
std::string check_balance(const std::vector<source_token>& t) {
  std::vector<source_token> open;
  const std::string opens = "([{", closes = ")]}";
  for (const source_token& x : t) {
    if (x.text.size() != 1) continue;
    if (opens.find(x.text[0]) != std::string::npos) {
      open.push_back(x);
    } else if (size_t k = closes.find(x.text[0]); k != std::string::npos) {
      if (open.empty() || open.back().text[0] != opens[k])
        return at_line(x.line) + "unmatched '" + x.text + "'";
      open.pop_back();
    }
  }
  if (!open.empty())
    return at_line(open.back().line) + "'" + open.back().text + "' is never closed";
  return "";
}

// A parameter list longer than this after expansion keeps no signature: without a bound, a macro
// whose body repeats its own name grows the list geometrically over the 8 levels (a 127-byte
// source took 2 GiB; found by kernel_signature_fuzzer).
constexpr size_t kMaxExpandedTokens = 4096;

// Expands object-like macros (a few levels); false if a function-like macro, or one that pastes
// or stringizes (#, ##), is used, or if the expansion outgrows kMaxExpandedTokens.
bool expand(std::vector<source_token>& t, const std::map<std::string, macro_definition>& macros) {
  for (int depth = 0; depth < 8; ++depth) {
    bool changed = false;
    std::vector<source_token> out;
    for (const source_token& x : t) {
      if (out.size() > kMaxExpandedTokens) return false;
      auto it = macros.find(x.text);
      if (it == macros.end()) {
        out.push_back(x);
        continue;
      }
      if (it->second.function_like) return false;
      for (const source_token& b : it->second.body)
        if (b.text == "#") return false;  // Stringizing or pasting: not expanded here.
      for (source_token b : it->second.body) {
        b.line = x.line;
        out.push_back(b);
      }
      changed = true;
    }
    t.swap(out);
    if (!changed) return true;
  }
  return true;  // Deeper (or recursive) definitions stay as they are: opaque types.
}

size_t scalar_size(const std::string& t) {
  static const std::map<std::string, size_t> sizes = {
      {"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"int", 4},  {"uint", 4},
      {"long", 8}, {"ulong", 8}, {"float", 4}, {"double", 8}, {"half", 2},
  };
  auto it = sizes.find(t);
  return it == sizes.end() ? 0 : it->second;
}

// "float4" -> 16, "int3" -> 16 (a 3-vector takes 4), "uint" -> 4; 0 if not a scalar or vector.
size_t value_size(const std::string& t) {
  if (size_t s = scalar_size(t)) return s;
  size_t digits = t.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(t[digits - 1]))) --digits;
  if (digits == t.size() || digits == 0) return 0;
  const size_t elem = scalar_size(t.substr(0, digits));
  const std::string n = t.substr(digits);
  if (!elem) return 0;
  if (n == "2" || n == "4" || n == "8" || n == "16") return elem * std::stoul(n);
  if (n == "3") return elem * 4;
  return 0;
}

// "unsigned int" -> "uint" and the like; other spellings as written.
std::string canonical_type(const std::vector<std::string>& words) {
  std::string joined;
  for (const auto& w : words) joined += (joined.empty() ? "" : " ") + w;
  static const std::map<std::string, std::string> names = {
      {"unsigned", "uint"},
      {"unsigned int", "uint"},
      {"signed", "int"},
      {"signed int", "int"},
      {"unsigned char", "uchar"},
      {"signed char", "char"},
      {"unsigned short", "ushort"},
      {"signed short", "short"},
      {"unsigned long", "ulong"},
      {"signed long", "long"},
      {"short int", "short"},
      {"long int", "long"},
      {"unsigned short int", "ushort"},
      {"unsigned long int", "ulong"},
  };
  auto it = names.find(joined);
  return it == names.end() ? joined : it->second;
}

bool is_image(const std::string& t) {
  static const std::set<std::string> images = {"image1d_t",
                                               "image1d_array_t",
                                               "image1d_buffer_t",
                                               "image2d_t",
                                               "image2d_array_t",
                                               "image2d_depth_t",
                                               "image2d_array_depth_t",
                                               "image2d_msaa_t",
                                               "image2d_array_msaa_t",
                                               "image2d_msaa_depth_t",
                                               "image2d_array_msaa_depth_t",
                                               "image3d_t"};
  return images.count(t) != 0;
}

// What a parameter's words say before its kind is known.
struct param_words {
  std::vector<std::string> words;  // Type words then, last, the name.
  int pointers = 0;
  bool const_before_star = false, pipe = false, tagged = false;
  int tag_line = 0;  // The line of the last struct/union/enum keyword.
};

// The address and access qualifiers, each with its spelling without underscores.
const std::map<std::string, cl_kernel_arg_address_qualifier>& address_qualifiers() {
  static const auto* m = new std::map<std::string, cl_kernel_arg_address_qualifier>{
      {"__global", CL_KERNEL_ARG_ADDRESS_GLOBAL},     {"global", CL_KERNEL_ARG_ADDRESS_GLOBAL},
      {"__constant", CL_KERNEL_ARG_ADDRESS_CONSTANT}, {"constant", CL_KERNEL_ARG_ADDRESS_CONSTANT},
      {"__local", CL_KERNEL_ARG_ADDRESS_LOCAL},       {"local", CL_KERNEL_ARG_ADDRESS_LOCAL},
      {"__private", CL_KERNEL_ARG_ADDRESS_PRIVATE},   {"private", CL_KERNEL_ARG_ADDRESS_PRIVATE}};
  return *m;
}

const std::map<std::string, cl_kernel_arg_access_qualifier>& access_qualifiers() {
  static const auto* m = new std::map<std::string, cl_kernel_arg_access_qualifier>{
      {"__read_only", CL_KERNEL_ARG_ACCESS_READ_ONLY},
      {"read_only", CL_KERNEL_ARG_ACCESS_READ_ONLY},
      {"__write_only", CL_KERNEL_ARG_ACCESS_WRITE_ONLY},
      {"write_only", CL_KERNEL_ARG_ACCESS_WRITE_ONLY},
      {"__read_write", CL_KERNEL_ARG_ACCESS_READ_WRITE},
      {"read_write", CL_KERNEL_ARG_ACCESS_READ_WRITE}};
  return *m;
}

// A struct, union or enum defined in the parameter (`global struct { int x; } *p`), its '{' at
// t[i]: its body is skipped, and the type is named as clang names it, "struct S" or, with no
// tag, "struct (unnamed struct at <source>:LINE)" (clang adds the file and column, POCL's a
// temporary file's). Returns the index of the matching '}' (or the last token).
size_t skip_tag_body(const std::vector<source_token>& t, size_t i, param_words& p) {
  if (p.words.back() == "struct" || p.words.back() == "union" || p.words.back() == "enum") {
    p.words.push_back("(unnamed " + p.words.back() + " at <source>:" + std::to_string(p.tag_line) +
                      ")");
  }
  int depth = 0;
  for (; i < t.size(); ++i) {
    if (t[i].text == "{") ++depth;
    if (t[i].text == "}" && --depth == 0) return i;
  }
  return t.size() - 1;
}

// Reads one parameter's tokens into `p` and the qualifiers into `a`; an error or "".
std::string read_param_words(const std::string& kernel, const std::vector<source_token>& t,
                             kernel_arg_signature& a, param_words& p) {
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string& w = t[i].text;
    if (w == "__attribute__") {  // Skip its balanced (( ... )).
      int depth = 0;
      for (++i; i < t.size(); ++i) {
        if (t[i].text == "(") ++depth;
        if (t[i].text == ")" && --depth == 0) break;
      }
    } else if (auto ad = address_qualifiers().find(w); ad != address_qualifiers().end()) {
      a.address = ad->second;
    } else if (auto ac = access_qualifiers().find(w); ac != access_qualifiers().end()) {
      a.access = ac->second;
    } else if (w == "const") {
      if (p.pointers == 0) p.const_before_star = true;
    } else if (w == "restrict" || w == "__restrict" || w == "__restrict__") {
      a.type_qualifier |= CL_KERNEL_ARG_TYPE_RESTRICT;
    } else if (w == "volatile") {
      if (p.pointers == 0) a.type_qualifier |= CL_KERNEL_ARG_TYPE_VOLATILE;
    } else if (w == "pipe") {
      p.pipe = true;
    } else if (w == "struct" || w == "union" || w == "enum") {
      p.tagged = true;
      p.tag_line = t[i].line;
      p.words.push_back(w);
    } else if (w == "{" && p.tagged) {
      i = skip_tag_body(t, i, p);
    } else if (w == "*") {
      ++p.pointers;
    } else if (w == "[") {  // An array parameter is a pointer.
      ++p.pointers;
      while (i < t.size() && t[i].text != "]") ++i;
    } else if (ident_start(w[0])) {
      p.words.push_back(w);
    } else {
      return at_line(t[i].line) + "kernel '" + kernel + "': unexpected '" + w + "' in a parameter";
    }
  }
  return "";
}

// A pointer parameter's kind and size, from its address space.
std::string pointer_param(const std::string& kernel, const param_words& p, int line,
                          kernel_arg_signature& a) {
  a.type_name += std::string(static_cast<size_t>(p.pointers), '*');
  if (p.const_before_star) a.type_qualifier |= CL_KERNEL_ARG_TYPE_CONST;
  switch (a.address) {
    case CL_KERNEL_ARG_ADDRESS_LOCAL:
      a.kind = arg_kind::local;
      a.size = 0;
      return "";
    case CL_KERNEL_ARG_ADDRESS_GLOBAL:
    case CL_KERNEL_ARG_ADDRESS_CONSTANT:
      if (a.address == CL_KERNEL_ARG_ADDRESS_CONSTANT) a.type_qualifier |= CL_KERNEL_ARG_TYPE_CONST;
      a.kind = arg_kind::pointer;
      a.size = sizeof(cl_mem);
      return "";
    default:
      return at_line(line) + "kernel '" + kernel + "': pointer parameter '" + a.name +
             "' must be in the global, constant or local address space";
  }
}

// A parameter passed by value (an image, a sampler, a scalar or vector, or an opaque type).
std::string value_param(const std::string& kernel, int line, kernel_arg_signature& a) {
  a.type_qualifier &= ~static_cast<cl_kernel_arg_type_qualifier>(CL_KERNEL_ARG_TYPE_RESTRICT);
  static const std::set<std::string> forbidden = {"bool", "size_t", "ptrdiff_t", "intptr_t",
                                                  "uintptr_t"};
  if (forbidden.count(a.type_name))
    return at_line(line) + "kernel '" + kernel + "': parameter '" + a.name +
           "' cannot be of type " + a.type_name;
  if (is_image(a.type_name)) {
    a.kind = arg_kind::image;
    a.size = sizeof(cl_mem);
    a.address = CL_KERNEL_ARG_ADDRESS_GLOBAL;
    if (a.access == CL_KERNEL_ARG_ACCESS_NONE) a.access = CL_KERNEL_ARG_ACCESS_READ_ONLY;
    return "";
  }
  a.access = CL_KERNEL_ARG_ACCESS_NONE;
  if (a.type_name == "sampler_t") {
    a.kind = arg_kind::sampler;
    a.size = sizeof(cl_sampler);
  } else if (size_t s = value_size(a.type_name)) {
    a.kind = arg_kind::value;
    a.size = s;
  } else {
    a.kind = arg_kind::opaque;
    a.size = 0;
  }
  a.address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
  return "";
}

// One parameter's tokens (macros expanded) -> its signature, or an error.
std::string parse_param(const std::string& kernel, const std::vector<source_token>& t,
                        kernel_arg_signature& a) {
  param_words p;
  if (std::string error = read_param_words(kernel, t, a, p); !error.empty()) return error;
  if (p.words.empty())
    return at_line(t.empty() ? 1 : t[0].line) + "kernel '" + kernel + "': a parameter has no type";
  // The last word names the parameter, unless it is the only one (or completes "struct X").
  const size_t type_words = p.words.size() >= 2 && !(p.tagged && p.words.size() == 2)
                                ? p.words.size() - 1
                                : p.words.size();
  if (type_words < p.words.size()) a.name = p.words.back();
  a.type_name =
      canonical_type(std::vector<std::string>(p.words.begin(), p.words.begin() + type_words));
  const int line = t[0].line;
  if (p.pipe) {
    a.kind = arg_kind::pipe;
    a.size = sizeof(cl_mem);
    a.address = CL_KERNEL_ARG_ADDRESS_GLOBAL;
    a.type_qualifier |= CL_KERNEL_ARG_TYPE_PIPE;
    return "";
  }
  if (p.pointers > 0) return pointer_param(kernel, p, line, a);
  return value_param(kernel, line, a);
}

// Splits a kernel's parameter list (macros expanded) at its top-level commas and reads each
// parameter into k.args; an error or "".
std::string parse_params(const std::vector<source_token>& params, int open_line,
                         kernel_signature& k) {
  std::vector<source_token> one;
  int level = 0;
  for (size_t p = 0; p <= params.size(); ++p) {
    if (p == params.size() || (params[p].text == "," && level == 0)) {
      if (one.empty())
        return at_line(p < params.size() ? params[p].line : open_line) + "kernel '" + k.name +
               "': an empty parameter";
      kernel_arg_signature a;
      if (std::string error = parse_param(k.name, one, a); !error.empty()) return error;
      k.args.push_back(a);
      one.clear();
      continue;
    }
    if (params[p].text == "(" || params[p].text == "[" || params[p].text == "{") ++level;
    if (params[p].text == ")" || params[p].text == "]" || params[p].text == "}") --level;
    one.push_back(params[p]);
  }
  return "";
}

// For every '(' its matching ')' (npos when it has none), in one pass with an explicit stack:
// skipping an attribute or a parameter list is then O(1), so no input makes the scan quadratic
// (a run of `__kernel __attribute__((` with nothing closed rescanned the rest at each kernel),
// and no input depth recurses.
std::vector<size_t> match_parentheses(const std::vector<source_token>& t) {
  std::vector<size_t> match(t.size(), std::string::npos), open;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].text == "(") {
      open.push_back(i);
    } else if (t[i].text == ")" && !open.empty()) {
      match[open.back()] = i;
      open.pop_back();
    }
  }
  return match;
}

// Whether t[i] starts a kernel's header, `__kernel [__attribute__((...))]* void
// [__attribute__((...))]* name (`; if so the name's index.
bool kernel_header(const std::vector<source_token>& t, const std::vector<size_t>& match, size_t i,
                   size_t& name_at) {
  if (t[i].text != "__kernel" && t[i].text != "kernel") return false;
  size_t j = i + 1;
  auto skip_attributes = [&] {
    while (j < t.size() && t[j].text == "__attribute__") {
      // An attribute with no balanced parentheses runs to the end, as a compiler would read it.
      j = j + 1 < t.size() && match[j + 1] != std::string::npos ? match[j + 1] + 1 : t.size();
    }
  };
  skip_attributes();
  if (j >= t.size() || t[j].text != "void") return false;
  ++j;
  skip_attributes();
  if (j + 1 >= t.size() || !ident_start(t[j].text[0]) || t[j + 1].text != "(") return false;
  name_at = j;
  return true;
}

}  // namespace

std::vector<std::string> scan_kernel_names(const std::string& source, const pp_macros& predefined) {
  const source_text s = preprocess(source, predefined);
  const std::vector<source_token>& t = s.tokens;
  const std::vector<size_t> match = match_parentheses(t);
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < t.size(); ++i) {
    size_t name_at;
    if (!kernel_header(t, match, i, name_at)) continue;
    const std::string& name = t[name_at].text;
    if (std::all_of(name.begin(), name.end(), ident_char) && seen.insert(name).second)
      out.push_back(name);
    i = match[name_at + 1] == std::string::npos ? t.size() : match[name_at + 1];
  }
  return out;
}

parsed_source parse_kernel_signatures(const std::string& source, const pp_macros& predefined) {
  parsed_source out;
  source_text s = preprocess(source, predefined);
  const std::vector<source_token>& t = s.tokens;
  if (s.undecided.empty()) {
    out.error = check_balance(t);
    if (!out.error.empty()) return out;
  }
  const std::vector<size_t> match = match_parentheses(t);
  std::unordered_map<std::string, int> seen;
  for (size_t i = 0; i < t.size(); ++i) {
    size_t j;
    if (!kernel_header(t, match, i, j)) continue;
    // The tokenizer keeps '.' inside a word (for numbers): `void add.(` is no kernel a compiler
    // would build (found by kernel_signature_fuzzer).
    if (!std::all_of(t[j].text.begin(), t[j].text.end(), ident_char)) {
      out.kernels.clear();
      out.error = at_line(t[j].line) + "'" + t[j].text + "' is not a valid kernel name";
      return out;
    }
    kernel_signature k;
    k.name = t[j].text;
    const int open_line = t[j + 1].line;
    const size_t e = match[j + 1];
    if (e == std::string::npos) {
      out.error =
          at_line(open_line) + "kernel '" + k.name + "': the parameter list's '(' is never closed";
      return out;
    }
    std::vector<source_token> params(t.begin() + static_cast<std::ptrdiff_t>(j + 2),
                                     t.begin() + static_cast<std::ptrdiff_t>(e));
    i = e;
    // A parameter list across a condition the mock could not evaluate: which parameters a
    // compiler would see is not known here, and a wrong count is worse than a refusal.
    if (const std::string* u = s.undecided_within(open_line, t[e].line)) {
      out.kernels.clear();
      out.error =
          at_line(open_line) + "kernel '" + k.name + "': its parameters depend on '" + *u +
          "', which mockcl cannot evaluate without a compiler (a function-like or non-integer "
          "macro, "
          "or a name an #include may define); build with a backing device (MOCKCL_BACKING=pocl)";
      return out;
    }
    ++seen[k.name];
    if (!expand(params, s.macros)) {
      k.known = false;
      out.kernels.push_back(k);
      continue;
    }
    if (params.empty() || (params.size() == 1 && params[0].text == "void")) {
      out.kernels.push_back(k);
      continue;
    }
    out.error = parse_params(params, open_line, k);
    if (!out.error.empty()) return out;
    out.kernels.push_back(k);
  }
  // A name defined twice (e.g. in the branches of an #if the mock could not evaluate): no
  // signature.
  for (kernel_signature& k : out.kernels)
    if (seen[k.name] > 1) {
      k.known = false;
      k.args.clear();
    }
  return out;
}

const kernel_signature* find_signature(const std::vector<kernel_signature>& kernels,
                                       const std::string& name) {
  for (const kernel_signature& k : kernels)
    if (k.name == name) return k.known ? &k : nullptr;
  return nullptr;
}

void sort_signatures(std::vector<kernel_signature>& kernels) {
  std::stable_sort(
      kernels.begin(), kernels.end(),
      [](const kernel_signature& a, const kernel_signature& b) { return a.name < b.name; });
}

const kernel_signature* find_sorted_signature(const std::vector<kernel_signature>& sorted,
                                              const std::string& name) {
  auto it =
      std::lower_bound(sorted.begin(), sorted.end(), name,
                       [](const kernel_signature& k, const std::string& n) { return k.name < n; });
  if (it == sorted.end() || it->name != name) return nullptr;
  return it->known ? &*it : nullptr;
}

}  // namespace mockcl
