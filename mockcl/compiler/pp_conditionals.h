// Preprocessor conditions (#if / #elif expressions) evaluated as a C preprocessor would, for the
// mock's kernel-signature reader (kernel_signature.h): with no compiler behind the mock, a
// parameter inside `#if KEY_LENGTH > 2` must count only when the condition holds (PyOpenCL's
// Philox kernels were counted 11 arguments for 9). Pure functions, fuzzable.
//
// An expression holds integer literals (decimal, octal, hex, with u/l suffixes), `defined NAME`,
// `defined(NAME)`, identifiers (object-like macros, expanded; any other identifier is 0), and
// C's operators: ! ~ unary - +, * / %, + -, << >>, < > <= >=, == !=, &, ^, |, &&, ||, ?:, and
// parentheses, in 64-bit signed arithmetic. The answer is "unknown" (never a guess) when the
// expression uses a function-like macro, a macro whose value is not an integer (M_PI_F), an
// identifier that an #include the mock cannot read may define, a character or floating literal,
// divides by zero, or does not parse.
#ifndef MOCKCL_COMPILER_PP_CONDITIONALS_H_
#define MOCKCL_COMPILER_PP_CONDITIONALS_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mockcl {

struct pp_macros {
  std::map<std::string, std::string> object_like;  // NAME -> replacement text
  std::set<std::string> function_like;
  // Defined, with a value an #if cannot use (the OpenCL C floating constants: M_PI_F, FLT_MAX).
  std::set<std::string> opaque;
  // An #include was seen: an identifier not defined here may be defined there.
  bool include_seen = false;

  bool defined(const std::string& name) const {
    return object_like.count(name) != 0 || function_like.count(name) != 0 ||
           opaque.count(name) != 0;
  }
};

enum class pp_truth { no, yes, unknown };

pp_truth evaluate_condition(std::string_view expression, const pp_macros& macros);

// The -D NAME[=VALUE] / -DNAME[=VALUE] (value "1" when none) and -U NAME / -UNAME of OpenCL build
// options, and -cl-std=CLx.y's version as 100 * x + 10 * y (0 when not given).
struct build_option_macros {
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<std::string> undefines;
  int cl_std = 0;
};
build_option_macros parse_build_options(std::string_view options);

}  // namespace mockcl

#endif  // MOCKCL_COMPILER_PP_CONDITIONALS_H_
