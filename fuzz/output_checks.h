// What every output of clpool_replay must be, whatever the trace held (issue 31's text safety),
// for trace_parsers_fuzzer: one check per format, each returning "" or what is wrong.
//   text  printable UTF-8 lines: no control character but '\n' (common/text_escape.h)
//   JSON  parses, and every string in it is printable text
//   SVG   well-formed XML (one root, tags nested and closed, attributes quoted, only the five
//         predefined entities and character references), printable text
//   HTML  each of the page's three JSON islands (result, replay, data) parses with printable
//         strings, and holds no '<' (that could end its <script> element early, or keep it from
//         ending)
#ifndef CLPOOL_FUZZ_OUTPUT_CHECKS_H_
#define CLPOOL_FUZZ_OUTPUT_CHECKS_H_

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/text_escape.h"

namespace clpool::fuzz {

inline std::string check_text(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (!common::is_printable_text(std::string_view(text).substr(start, end - start))) {
      return "text output line at byte " + std::to_string(start) +
             " is not printable: " + common::escape_text(text.substr(start, end - start));
    }
    start = end + 1;
  }
  return "";
}

// Every string (keys too) in `j` is printable text.
inline std::string check_json_strings(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    return common::is_printable_text(s)
               ? ""
               : "a JSON string is not printable: " + common::escape_text(s);
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!common::is_printable_text(it.key()))
        return "a JSON key is not printable: " + common::escape_text(it.key());
      if (std::string why = check_json_strings(it.value()); !why.empty()) return why;
    }
  }
  if (j.is_array()) {
    for (const auto& x : j) {
      if (std::string why = check_json_strings(x); !why.empty()) return why;
    }
  }
  return "";
}

inline std::string check_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return std::string("JSON output does not parse: ") + e.what();
  }
  return check_json_strings(j);
}

// A small well-formedness check of XML as clpool_replay writes it (no DTD, CDATA or PIs
// except the declaration).
inline std::string check_xml(const std::string& x) {
  if (std::string why = check_text(x); !why.empty()) return "SVG: " + why;
  std::vector<std::string> open;
  bool root_seen = false;
  const auto entity_ok = [&](std::size_t at, std::size_t& end) {
    end = x.find(';', at);
    if (end == std::string::npos || end - at > 10) return false;
    const std::string e = x.substr(at + 1, end - at - 1);
    if (e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos") return true;
    if (e.size() >= 2 && e[0] == '#') {
      const bool hex = e[1] == 'x';
      const std::string digits = e.substr(hex ? 2 : 1);
      if (digits.empty()) return false;
      for (char d : digits) {
        if (!(std::isdigit(static_cast<unsigned char>(d)) ||
              (hex && std::isxdigit(static_cast<unsigned char>(d)))))
          return false;
      }
      return true;
    }
    return false;
  };
  std::size_t i = 0;
  if (x.rfind("<?xml", 0) == 0) {
    i = x.find("?>");
    if (i == std::string::npos) return "unterminated XML declaration";
    i += 2;
  }
  while (i < x.size()) {
    const char c = x[i];
    if (c == '&') {
      std::size_t end;
      if (!entity_ok(i, end)) return "bad entity at byte " + std::to_string(i);
      i = end + 1;
      continue;
    }
    if (c == '>') return "a raw '>' in text at byte " + std::to_string(i);
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c)))
        return "text outside the root at byte " + std::to_string(i);
      ++i;
      continue;
    }
    if (x.compare(i, 4, "<!--") == 0) {
      const std::size_t end = x.find("-->", i + 4);
      if (end == std::string::npos) return "unterminated comment";
      i = end + 3;
      continue;
    }
    const bool closing = i + 1 < x.size() && x[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t name_start = j;
    while (j < x.size() && (std::isalnum(static_cast<unsigned char>(x[j])) || x[j] == '-' ||
                            x[j] == ':' || x[j] == '_'))
      ++j;
    const std::string name = x.substr(name_start, j - name_start);
    if (name.empty()) return "a '<' that starts no tag at byte " + std::to_string(i);
    if (closing) {
      while (j < x.size() && std::isspace(static_cast<unsigned char>(x[j]))) ++j;
      if (j >= x.size() || x[j] != '>') return "bad end tag at byte " + std::to_string(i);
      if (open.empty() || open.back() != name)
        return "end tag </" + name + "> does not match at byte " + std::to_string(i);
      open.pop_back();
      i = j + 1;
      continue;
    }
    // Attributes: name="value" or name='value', values without '<' and with valid entities.
    for (;;) {
      while (j < x.size() && std::isspace(static_cast<unsigned char>(x[j]))) ++j;
      if (j >= x.size()) return "unterminated tag <" + name;
      if (x[j] == '>' || (x[j] == '/' && j + 1 < x.size() && x[j + 1] == '>')) break;
      const std::size_t an = j;
      while (j < x.size() && (std::isalnum(static_cast<unsigned char>(x[j])) || x[j] == '-' ||
                              x[j] == ':' || x[j] == '_'))
        ++j;
      if (j == an || j + 1 >= x.size() || x[j] != '=' || (x[j + 1] != '"' && x[j + 1] != '\'')) {
        return "bad attribute in <" + name + "> at byte " + std::to_string(j);
      }
      const char q = x[j + 1];
      std::size_t k = j + 2;
      while (k < x.size() && x[k] != q) {
        if (x[k] == '<') return "'<' in an attribute of <" + name + ">";
        if (x[k] == '&') {
          std::size_t end;
          if (!entity_ok(k, end)) return "bad entity in an attribute of <" + name + ">";
          k = end;
        }
        ++k;
      }
      if (k >= x.size()) return "unterminated attribute in <" + name + ">";
      j = k + 1;
    }
    const bool empty = x[j] == '/';
    if (open.empty()) {
      if (root_seen) return "a second root element <" + name + ">";
      root_seen = true;
    }
    if (!empty) open.push_back(name);
    i = j + (empty ? 2 : 1);
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no root element";
  return "";
}

inline std::string check_html(const std::string& page) {
  // The page inlines three JSON documents (tools/replay/html_page.cc): the result in the one
  // schema, the replay it shows, and its own data. Each must parse with printable strings and hold
  // no '<': "</script" would end it, "<!--<script" would keep its end tag from ending it.
  std::string rest;  // the page outside the islands
  std::size_t from = 0;
  for (const char* id : {"clpool-result", "clpool-replay", "clpool-data"}) {
    const std::string open = std::string("<script type=\"application/json\" id=\"") + id + "\">";
    const std::size_t at = page.find(open, from);
    if (at == std::string::npos) return std::string("the page has no ") + id + " island";
    const std::size_t start = at + open.size();
    const std::size_t end = page.find("</script>", start);
    if (end == std::string::npos) return std::string("the ") + id + " island is never closed";
    const std::string data = page.substr(start, end - start);
    if (data.find('<') != std::string::npos)
      return std::string("the ") + id + " island holds a '<'";
    if (std::string why = check_json(data); !why.empty())
      return std::string("the page's ") + id + ": " + why;
    rest += page.substr(from, at - from);
    from = end;
  }
  rest += page.substr(from);
  // Nothing from the trace outside the islands: the rest is the fixed page (its own tests check
  // it in a browser); it must still be printable.
  if (std::string why = check_text(rest); !why.empty()) return "the page: " + why;
  return "";
}

}  // namespace clpool::fuzz

#endif  // CLPOOL_FUZZ_OUTPUT_CHECKS_H_
