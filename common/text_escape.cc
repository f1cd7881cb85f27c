#include "common/text_escape.h"

#include <cstdint>

namespace clpool::common {
namespace {

constexpr char hex[] = "0123456789ABCDEF";

// The length of the well-formed UTF-8 sequence at s[i] and its code point, or 0 when the bytes
// there are not one (a stray continuation byte, an overlong form, a surrogate, a cut sequence).
std::size_t utf8_at(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n;
  std::uint32_t min;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// Characters a terminal acts on instead of showing: controls, and those that reorder the text
// around them (bidirectional overrides and isolates, "Trojan Source").
bool acts_on_terminal(std::uint32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void byte_escape(std::string& out, unsigned char c) {
  out += "\\x";
  out += hex[c >> 4];
  out += hex[c & 15];
}

}  // namespace

std::string ascii_text(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

std::string escape_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_at(s, i, cp);
    if (n == 0) {
      byte_escape(out, static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (acts_on_terminal(cp)) {
      if (cp < 0x100) {
        byte_escape(out, static_cast<unsigned char>(cp));
      } else {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += hex[(cp >> shift) & 15];
      }
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string json_text(std::string_view s) { return escape_text(s); }

std::string escape_xml(std::string_view s) {
  const std::string text = escape_text(s);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool is_printable_text(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_at(s, i, cp);
    if (n == 0 || acts_on_terminal(cp)) return false;
    i += n;
  }
  return true;
}

std::string file_name_for(std::string_view text, std::size_t max_bytes) {
  if (max_bytes < 32) max_bytes = 32;
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || (c == '.' && i != 0);
    if (kept) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (out.empty()) return "%";
  if (out.size() <= max_bytes) return out;
  std::uint64_t h = 0xcbf29ce484222325u;  // FNV-1a, 64 bits: stable across builds and runs
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  std::size_t keep = max_bytes - 17;
  // Never cut a %XX in two.
  if (keep >= 1 && out[keep - 1] == '%')
    keep -= 1;
  else if (keep >= 2 && out[keep - 2] == '%')
    keep -= 2;
  std::string cut = out.substr(0, keep) + "~";
  for (int shift = 60; shift >= 0; shift -= 4) cut += hex[(h >> shift) & 15];
  return cut;
}

}  // namespace clpool::common
