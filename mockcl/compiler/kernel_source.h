// The OpenCL C source as kernel_signature.cc reads it: comments and literals out, continued lines
// joined, directives followed (#define and #undef remembered, #if chains evaluated with
// pp_conditionals.h), and the lines a compiler would read cut into tokens. The lexer of the
// kernel-signature parser, apart from what it reads out of the tokens (kernel_signature.cc);
// private to //mockcl:kernel_signature.
#ifndef MOCKCL_COMPILER_KERNEL_SOURCE_H_
#define MOCKCL_COMPILER_KERNEL_SOURCE_H_

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mockcl/compiler/pp_conditionals.h"

namespace mockcl {

struct source_token {
  std::string text;
  int line = 1;
};

struct macro_definition {
  bool function_like = false;
  std::vector<source_token> body;
};

struct source_text {
  std::vector<source_token> tokens;
  std::map<std::string, macro_definition> macros;
  // The directives of #if chains whose condition could not be evaluated (pp_conditionals.h),
  // in line order, each with the directive it could not evaluate: every branch of such a chain is
  // kept, as a reader that evaluates nothing would, and a parameter list that a directive of one
  // falls inside is refused, never miscounted.
  std::vector<std::pair<int, std::string>> undecided;

  // The undecidable directive of a chain with a directive on a line in (first, last), or null.
  const std::string* undecided_within(int first, int last) const {
    auto it =
        std::upper_bound(undecided.begin(), undecided.end(), first,
                         [](int l, const std::pair<int, std::string>& u) { return l < u.first; });
    return it != undecided.end() && it->first < last ? &it->second : nullptr;
  }
};

inline bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Comments and literals out, directives read (object-like macros of `predefined` first), and the
// tokens of the lines a compiler would read, each with its line.
source_text preprocess(const std::string& src, const pp_macros& predefined);

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_KERNEL_SOURCE_H_
