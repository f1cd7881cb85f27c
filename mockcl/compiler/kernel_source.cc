#include "mockcl/compiler/kernel_source.h"

namespace mockcl {
namespace {

// Appends the tokens of `text` (comments and literals already gone).
void tokenize(const std::string& text, int line, std::vector<source_token>& out) {
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ident_start(c) || std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < text.size() && (ident_char(text[j]) || text[j] == '.')) ++j;
      out.push_back({text.substr(i, j - i), line});
      i = j;
    } else {
      out.push_back({std::string(1, c), line});
      ++i;
    }
  }
}

// Removes comments and string/char literals, keeping newlines so that lines stay right, and joins
// continued lines.
std::string strip_comments_and_literals(const std::string& src) {
  std::string text;
  text.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '\\' && i + 1 < src.size() &&
        src[i + 1] == '\n') {  // Line continuation: keep the count.
      text += ' ';
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      while (i < src.size() && src[i] != '\n') ++i;
      text += '\n';
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      i += 2;
      while (i + 1 < src.size() && !(src[i] == '*' && src[i + 1] == '/')) {
        if (src[i] == '\n') text += '\n';
        ++i;
      }
      ++i;
      text += ' ';
      continue;
    }
    if (c == '"' || c == '\'') {
      for (++i; i < src.size() && src[i] != c && src[i] != '\n'; ++i)
        if (src[i] == '\\') ++i;
      text += ' ';
      continue;
    }
    text += c;
  }
  return text;
}

// The preprocessor lines of one source, in order: #defines and #undefs are remembered, and #if
// chains evaluated (pp_conditionals.h) with the predefined macros, so that the caller reads only
// the lines a compiler would.
class directive_reader {
 public:
  directive_reader(const pp_macros& predefined, source_text& out) : pm_(predefined), out_(out) {
    for (const auto& [name, value] : pm_.object_like) {
      macro_definition m;
      tokenize(value, 0, m.body);
      out_.macros[name] = m;
    }
  }

  // Whether the current line is read (not inside a branch that is not taken).
  bool active() const { return chains_.empty() || chains_.back().active; }

  // The directive on line `l` (its '#' at `k`).
  void read(const std::string& l, size_t k, int line) {
    std::vector<source_token> d;
    tokenize(l.substr(k + 1), line, d);
    const std::string word = d.empty() ? "" : d[0].text;
    // What follows the directive's word: the condition, for #if and #elif.
    const size_t word_at = d.empty() ? l.size() : l.find(word, k + 1);
    const std::string rest = word_at >= l.size() ? "" : l.substr(word_at + word.size());
    const std::string directive = l.substr(k);
    if (word == "if" || word == "ifdef" || word == "ifndef") {
      open_chain(word, d, rest, line, directive);
    } else if (word == "elif" && !chains_.empty()) {
      elif_branch(rest, line, directive);
    } else if (word == "else" && !chains_.empty()) {
      else_branch(line, directive);
    } else if (word == "endif" && !chains_.empty()) {
      const chain& c = chains_.back();
      if (c.undecided && c.outer_active) out_.undecided.emplace_back(line, c.directive);
      chains_.pop_back();
    } else if (!active()) {
      // A directive in a branch not read does nothing.
    } else if (d.size() >= 2 && word == "define") {
      define(l, d);
    } else if (d.size() >= 2 && word == "undef") {
      out_.macros.erase(d[1].text);
      forget(d[1].text);
      pm_.opaque.erase(d[1].text);
    } else if (word == "include") {
      pm_.include_seen = true;
    }
  }

 private:
  // One open #if chain.
  struct chain {
    bool outer_active;      // the lines around the chain are read
    bool taken;             // a branch was chosen: the later ones are not
    bool active;            // the current branch is read
    bool undecided;         // a condition could not be evaluated: every branch is read
    std::string directive;  // the directive it could not evaluate
  };

  void decide(chain& c, pp_truth t, int line, const std::string& directive) {
    if (t == pp_truth::unknown && !c.undecided) {
      c.undecided = true;
      c.directive = directive;
    }
    if (c.undecided) {
      c.active = c.outer_active;
      if (c.outer_active) out_.undecided.emplace_back(line, c.directive);
      return;
    }
    c.active = c.outer_active && !c.taken && t == pp_truth::yes;
    c.taken = c.taken || c.active;
  }

  void open_chain(const std::string& word, const std::vector<source_token>& d,
                  const std::string& rest, int line, const std::string& directive) {
    chain c{active(), false, false, false, ""};
    if (!c.outer_active) {
      c.taken = true;  // inside a branch not read: so is all of this chain
    } else if (word == "if") {
      decide(c, evaluate_condition(rest, pm_), line, directive);
    } else {
      const bool def = d.size() >= 2 && pm_.defined(d[1].text);
      pp_truth t = def == (word == "ifdef") ? pp_truth::yes : pp_truth::no;
      if (d.size() < 2 || (!def && pm_.include_seen)) t = pp_truth::unknown;
      decide(c, t, line, directive);
    }
    chains_.push_back(c);
  }

  void elif_branch(const std::string& rest, int line, const std::string& directive) {
    chain& c = chains_.back();
    if (c.undecided) {
      decide(c, pp_truth::unknown, line, directive);
    } else if (c.taken || !c.outer_active) {
      c.active = false;
    } else {
      decide(c, evaluate_condition(rest, pm_), line, directive);
    }
  }

  void else_branch(int line, const std::string& directive) {
    chain& c = chains_.back();
    if (c.undecided) {
      decide(c, pp_truth::unknown, line, directive);
    } else {
      c.active = c.outer_active && !c.taken;
      c.taken = true;
    }
  }

  void define(const std::string& l, const std::vector<source_token>& d) {
    macro_definition m;
    // Function-like: '(' right after the name, with no space between.
    const size_t name_at = l.find(d[1].text, l.find("define") + 6);
    const size_t after = name_at + d[1].text.size();
    m.function_like = after < l.size() && l[after] == '(';
    m.body.assign(d.begin() + 2, d.end());
    out_.macros[d[1].text] = m;
    forget(d[1].text);
    if (m.function_like) {
      pm_.function_like.insert(d[1].text);
    } else {
      pm_.object_like[d[1].text] = after < l.size() ? l.substr(after) : "";
    }
  }

  // The conditions' view of a name no longer defined as it was.
  void forget(const std::string& name) {
    pm_.object_like.erase(name);
    pm_.function_like.erase(name);
  }

  pp_macros pm_;
  source_text& out_;
  std::vector<chain> chains_;
};

}  // namespace

// Comments and literals out (strip_comments_and_literals), directives read (directive_reader),
// and the tokens of the lines a compiler would read.
source_text preprocess(const std::string& src, const pp_macros& predefined) {
  const std::string text = strip_comments_and_literals(src);
  source_text out;
  // Tokens are at most one per character; most sources average four or more characters a token.
  // Reserving that once spares the repeated growth that made a large source's scan superlinear
  // in practice.
  out.tokens.reserve(text.size() / 4 + 16);
  directive_reader directives(predefined, out);
  int line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(start, end - start);
    const size_t k = l.find_first_not_of(" \t\r");
    if (k != std::string::npos && l[k] == '#') {
      directives.read(l, k, line);
    } else if (directives.active()) {
      tokenize(l, line, out.tokens);
    }
    if (end == text.size()) break;
    start = end + 1;
    ++line;
  }
  return out;
}

}  // namespace mockcl
