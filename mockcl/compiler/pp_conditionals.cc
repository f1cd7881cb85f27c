#include "mockcl/compiler/pp_conditionals.h"

#include <cctype>
#include <cstdint>
#include <limits>

namespace mockcl {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The tokens of a condition or a macro's replacement; false for a character the expression
// grammar has no use for (a string or character literal, '#', '.').
bool lex(std::string_view s, std::vector<std::string>& out) {
  static const char* const two[] = {"&&", "||", "==", "!=", "<=", ">=", "<<", ">>"};
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ident_start(c) || std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && (ident_char(s[j]) || s[j] == '.')) ++j;
      out.emplace_back(s.substr(i, j - i));
      i = j;
    } else {
      bool matched = false;
      for (const char* op : two) {
        if (s.substr(i, 2) == op) {
          out.emplace_back(op);
          i += 2;
          matched = true;
          break;
        }
      }
      if (matched) continue;
      if (std::string_view("()!~-+*/%<>&^|?:").find(c) == std::string_view::npos) return false;
      out.emplace_back(1, c);
      ++i;
    }
  }
  return true;
}

// An integer literal's value; false for anything else (a float, a bad digit, an overflow).
bool literal(const std::string& t, int64_t& v) {
  size_t end = t.size();
  while (end > 0 &&
         (t[end - 1] == 'u' || t[end - 1] == 'U' || t[end - 1] == 'l' || t[end - 1] == 'L'))
    --end;
  const std::string digits = t.substr(0, end);
  if (digits.empty()) return false;
  int base = 10;
  size_t start = 0;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    start = 2;
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
    start = 1;
  }
  uint64_t x = 0;
  for (size_t i = start; i < digits.size(); ++i) {
    const char c = digits[i];
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return false;
    if (d >= base) return false;
    if (x > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) /
                static_cast<uint64_t>(base))
      return false;
    x = x * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  v = static_cast<int64_t>(x);
  return true;
}

constexpr int kMaxDepth = 32;
constexpr size_t kMaxTokens = 4096;

// `defined` resolved, macros expanded, other identifiers 0: the tokens an evaluator reads. False
// (unknown) as the header says.
bool expand(const std::vector<std::string>& in, const pp_macros& m, std::set<std::string>& hidden,
            int depth, std::vector<std::string>& out) {
  if (depth > kMaxDepth) return false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (out.size() > kMaxTokens) return false;
    const std::string& t = in[i];
    if (!ident_start(t[0])) {
      out.push_back(t);
      continue;
    }
    if (t == "defined") {
      std::string name;
      if (i + 1 < in.size() && ident_start(in[i + 1][0])) {
        name = in[++i];
      } else if (i + 3 < in.size() && in[i + 1] == "(" && ident_start(in[i + 2][0]) &&
                 in[i + 3] == ")") {
        name = in[i + 2];
        i += 3;
      } else {
        return false;
      }
      out.push_back(m.defined(name) ? "1" : "0");
      continue;
    }
    if (const auto it = m.object_like.find(t); it != m.object_like.end() && hidden.count(t) == 0) {
      std::vector<std::string> body;
      if (!lex(it->second, body)) return false;
      hidden.insert(t);
      const bool ok = expand(body, m, hidden, depth + 1, out);
      hidden.erase(t);
      if (!ok) return false;
      continue;
    }
    if (m.function_like.count(t) != 0 || m.opaque.count(t) != 0 || hidden.count(t) != 0)
      return false;
    if (m.include_seen) return false;  // perhaps defined by the header the mock cannot read
    out.push_back("0");
  }
  return true;
}

struct value {
  int64_t v = 0;
  bool known = true;
};

class evaluator {
 public:
  explicit evaluator(const std::vector<std::string>& t) : t_(t) {}

  bool run(value& out) {
    out = conditional();
    return ok_ && pos_ == t_.size();
  }

 private:
  const std::string* peek() const { return pos_ < t_.size() ? &t_[pos_] : nullptr; }
  bool accept(const char* s) {
    if (pos_ < t_.size() && t_[pos_] == s) {
      ++pos_;
      return true;
    }
    return false;
  }

  value conditional() {
    value c = binary(1);
    if (!accept("?")) return c;
    value a = conditional();
    if (!accept(":")) ok_ = false;
    value b = conditional();
    if (!c.known) return {0, false};
    return c.v != 0 ? a : b;
  }

  static int precedence(const std::string& op) {
    if (op == "||") return 1;
    if (op == "&&") return 2;
    if (op == "|") return 3;
    if (op == "^") return 4;
    if (op == "&") return 5;
    if (op == "==" || op == "!=") return 6;
    if (op == "<" || op == ">" || op == "<=" || op == ">=") return 7;
    if (op == "<<" || op == ">>") return 8;
    if (op == "+" || op == "-") return 9;
    if (op == "*" || op == "/" || op == "%") return 10;
    return 0;
  }

  value binary(int min) {
    value left = unary();
    for (;;) {
      const std::string* op = peek();
      if (op == nullptr) return left;
      const int p = precedence(*op);
      if (p == 0 || p < min) return left;
      const std::string o = *op;
      ++pos_;
      const value right = binary(p + 1);
      left = apply(o, left, right);
    }
  }

  value apply(const std::string& o, value a, value b) {
    // && and || decide without an unknown side when the known one settles them.
    if (o == "&&") {
      if ((a.known && a.v == 0) || (b.known && b.v == 0)) return {0, true};
      return {1, a.known && b.known};
    }
    if (o == "||") {
      if ((a.known && a.v != 0) || (b.known && b.v != 0)) return {1, true};
      return {0, a.known && b.known};
    }
    if (!a.known || !b.known) return {0, false};
    const auto ua = static_cast<uint64_t>(a.v), ub = static_cast<uint64_t>(b.v);
    if (o == "|") return {a.v | b.v, true};
    if (o == "^") return {a.v ^ b.v, true};
    if (o == "&") return {a.v & b.v, true};
    if (o == "==") return {a.v == b.v, true};
    if (o == "!=") return {a.v != b.v, true};
    if (o == "<") return {a.v < b.v, true};
    if (o == ">") return {a.v > b.v, true};
    if (o == "<=") return {a.v <= b.v, true};
    if (o == ">=") return {a.v >= b.v, true};
    if (o == "<<" || o == ">>") {
      if (b.v < 0 || b.v > 63) return {0, false};
      return {static_cast<int64_t>(o == "<<" ? ua << b.v : static_cast<uint64_t>(a.v >> b.v)),
              true};
    }
    if (o == "+") return {static_cast<int64_t>(ua + ub), true};
    if (o == "-") return {static_cast<int64_t>(ua - ub), true};
    if (o == "*") return {static_cast<int64_t>(ua * ub), true};
    if (b.v == 0 || (a.v == std::numeric_limits<int64_t>::min() && b.v == -1)) return {0, false};
    return {o == "/" ? a.v / b.v : a.v % b.v, true};
  }

  value unary() {
    if (++depth_ > kMaxDepth * 8) {
      ok_ = false;
      return {0, false};
    }
    value out;
    if (accept("!")) {
      const value x = unary();
      out = {x.v == 0, x.known};
    } else if (accept("~")) {
      const value x = unary();
      out = {~x.v, x.known};
    } else if (accept("-")) {
      const value x = unary();
      out = {static_cast<int64_t>(0 - static_cast<uint64_t>(x.v)), x.known};
    } else if (accept("+")) {
      out = unary();
    } else if (accept("(")) {
      out = conditional();
      if (!accept(")")) ok_ = false;
    } else if (const std::string* t = peek();
               t != nullptr && std::isdigit(static_cast<unsigned char>((*t)[0]))) {
      ++pos_;
      if (!literal(*t, out.v)) out.known = false;
    } else {
      ok_ = false;
      out.known = false;
    }
    --depth_;
    return out;
  }

  const std::vector<std::string>& t_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool ok_ = true;
};

}  // namespace

pp_truth evaluate_condition(std::string_view expression, const pp_macros& macros) {
  std::vector<std::string> tokens, expanded;
  std::set<std::string> hidden;
  if (!lex(expression, tokens) || tokens.empty() || !expand(tokens, macros, hidden, 0, expanded)) {
    return pp_truth::unknown;
  }
  evaluator e(expanded);
  value v;
  if (!e.run(v) || !v.known) return pp_truth::unknown;
  return v.v != 0 ? pp_truth::yes : pp_truth::no;
}

build_option_macros parse_build_options(std::string_view options) {
  build_option_macros out;
  std::vector<std::string> words;
  for (size_t i = 0; i < options.size();) {
    while (i < options.size() && std::isspace(static_cast<unsigned char>(options[i]))) ++i;
    size_t j = i;
    while (j < options.size() && !std::isspace(static_cast<unsigned char>(options[j]))) ++j;
    if (j > i) words.emplace_back(options.substr(i, j - i));
    i = j;
  }
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "-D" || w == "-U" || w.rfind("-D", 0) == 0 || w.rfind("-U", 0) == 0) {
      std::string arg = w.size() > 2 ? w.substr(2) : (i + 1 < words.size() ? words[++i] : "");
      if (arg.empty()) continue;
      if (w[1] == 'U') {
        out.undefines.push_back(arg);
        continue;
      }
      const size_t eq = arg.find('=');
      out.defines.emplace_back(arg.substr(0, eq),
                               eq == std::string::npos ? "1" : arg.substr(eq + 1));
    } else if (w.rfind("-cl-std=CL", 0) == 0 && w.size() == 13 &&
               std::isdigit(static_cast<unsigned char>(w[10])) && w[11] == '.' &&
               std::isdigit(static_cast<unsigned char>(w[12]))) {
      out.cl_std = 100 * (w[10] - '0') + 10 * (w[12] - '0');
    }
  }
  return out;
}

}  // namespace mockcl
