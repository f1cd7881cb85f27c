#include "trace/sites.h"

#include <algorithm>

namespace clpool::trace {

std::string_view to_string(frame_lang lang) { return lang == frame_lang::python ? "py" : "native"; }

std::optional<frame_lang> parse_frame_lang(std::string_view word) {
  if (word == "py") return frame_lang::python;
  if (word == "native") return frame_lang::native;
  return std::nullopt;
}

std::string escape_field(std::string_view text) {
  if (text.empty()) return "%";
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c == 0x7f || c == '%' || c == '#') {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

bool unescape_field(std::string_view field, std::string& out, std::string* why) {
  out.clear();
  if (field == "%") return true;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '%') {
      out.push_back(field[i]);
      continue;
    }
    const int hi = i + 1 < field.size() ? digit(field[i + 1]) : -1;
    const int lo = i + 2 < field.size() ? digit(field[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      if (why != nullptr) {
        std::string shown;
        for (const char c : field.substr(i, 3)) {
          shown += (static_cast<unsigned char>(c) > ' ' && static_cast<unsigned char>(c) < 0x7f)
                       ? c
                       : '?';
        }
        *why = "bad %-escape '" + shown + "' at byte " + std::to_string(i) +
               " (% takes two hex digits)";
      }
      return false;
    }
    out.push_back(static_cast<char>(hi << 4 | lo));
    i += 2;
  }
  if (out.size() > max_frame_text) {
    if (why != nullptr) {
      *why = "longer than " + std::to_string(max_frame_text) + " bytes (" +
             std::to_string(out.size()) + ")";
    }
    return false;
  }
  return true;
}

std::string site_table::add_frame(std::uint64_t id, frame_info frame) {
  if (id == 0) return "frame id 0 is reserved";
  if (frames_.size() >= max_site_entries) return "more than 4194304 frames";
  if (frame.file.size() > max_frame_text || frame.function.size() > max_frame_text) {
    return "frame name longer than 600 bytes";
  }
  if (!frames_.emplace(id, std::move(frame)).second) {
    return "frame " + std::to_string(id) + " is defined twice";
  }
  return {};
}

std::string site_table::add_stack(std::uint64_t id, std::uint64_t parent, std::uint64_t frame) {
  if (id == 0) return "stack id 0 is reserved (it means no stack)";
  if (frame == 0) return "stack " + std::to_string(id) + " names frame 0";
  if (stacks_.size() >= max_site_entries) return "more than 4194304 stacks";
  if (parent != 0 && stacks_.count(parent) == 0) {
    return "stack " + std::to_string(id) + " names parent stack " + std::to_string(parent) +
           ", which is not defined before it";
  }
  if (!stacks_.emplace(id, stack_entry{parent, frame}).second) {
    return "stack " + std::to_string(id) + " is defined twice";
  }
  order_.emplace_back(id, stack_entry{parent, frame});
  return {};
}

const frame_info* site_table::find_frame(std::uint64_t id) const {
  const auto it = frames_.find(id);
  return it == frames_.end() ? nullptr : &it->second;
}

std::vector<std::uint64_t> site_table::frames_of(std::uint64_t stack) const {
  std::vector<std::uint64_t> out;
  // Parents are defined before their children, so the chain ends; the bound is a second guard.
  while (stack != 0 && out.size() <= stacks_.size()) {
    const auto it = stacks_.find(stack);
    if (it == stacks_.end()) break;
    out.push_back(it->second.frame);
    stack = it->second.parent;
  }
  return out;
}

std::string site_table::describe_frame(std::uint64_t frame) const {
  const frame_info* f = find_frame(frame);
  if (f == nullptr) return "? (frame " + std::to_string(frame) + " not defined)";
  std::string out = f->function.empty() ? std::string("?") : f->function;
  out += " (" + f->file;
  if (f->line != 0) out += ":" + std::to_string(f->line);
  return out + ")";
}

std::vector<std::pair<std::uint64_t, const frame_info*>> site_table::all_frames() const {
  std::vector<std::pair<std::uint64_t, const frame_info*>> out;
  out.reserve(frames_.size());
  for (const auto& [id, f] : frames_) out.emplace_back(id, &f);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace clpool::trace

namespace clpool::trace {
namespace {

bool parse_u64(std::string_view s, std::uint64_t& v) {
  if (s.empty()) return false;
  std::uint64_t x = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(x, 10u, &x) ||
        __builtin_add_overflow(x, static_cast<unsigned>(c - '0'), &x)) {
      return false;
    }
  }
  v = x;
  return true;
}

std::vector<std::string_view> split_blanks(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Reads a varint, never at or past `end`. False when cut off or wider than 64 bits.
bool read_varint_bounded(const unsigned char*& p, const unsigned char* end, std::uint64_t& v) {
  std::uint64_t x = 0;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (p >= end) return false;
    const std::uint64_t b = *p++;
    if (shift == 63 && b > 1) return false;
    x |= (b & 0x7f) << shift;
    if (b < 0x80) {
      v = x;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string parse_site_line(std::string_view line, site_table& table) {
  const std::vector<std::string_view> f = split_blanks(line);
  if (f.empty()) return "empty site line";
  if (f[0] == "stack") {
    if (f.size() != 4) {
      return "a stack line has 4 fields (stack ID PARENT FRAME), this one has " +
             std::to_string(f.size());
    }
    std::uint64_t id, parent, frame;
    if (!parse_u64(f[1], id) || !parse_u64(f[2], parent) || !parse_u64(f[3], frame)) {
      return "stack line: ID, PARENT and FRAME must be decimal numbers";
    }
    return table.add_stack(id, parent, frame);
  }
  if (f[0] == "frame") {
    if (f.size() != 6) {
      return "a frame line has 6 fields (frame ID LANG LINE FILE FUNCTION), this one has " +
             std::to_string(f.size());
    }
    std::uint64_t id;
    frame_info info;
    if (!parse_u64(f[1], id) || !parse_u64(f[3], info.line)) {
      return "frame line: ID and LINE must be decimal numbers";
    }
    const std::optional<frame_lang> lang = parse_frame_lang(f[2]);
    if (!lang) return "frame line: LANG must be py or native";
    info.lang = *lang;
    std::string why;
    if (!unescape_field(f[4], info.file, &why)) return "frame line: FILE: " + why;
    if (!unescape_field(f[5], info.function, &why)) return "frame line: FUNCTION: " + why;
    return table.add_frame(id, std::move(info));
  }
  return "unknown site line";
}

std::string parse_binary_site(unsigned tag, const unsigned char*& p, const unsigned char* end,
                              site_table& table) {
  std::uint64_t id = 0, a = 0, b = 0;
  if (!read_varint_bounded(p, end, id) || !read_varint_bounded(p, end, a) ||
      !read_varint_bounded(p, end, b)) {
    return "truncated or corrupt site record";
  }
  if (tag == 6) return table.add_stack(id, a, b);
  // A frame: id, lang, line, then two length-prefixed texts.
  if (a > 1) return "frame record: unknown language " + std::to_string(a);
  frame_info info;
  info.lang = static_cast<frame_lang>(a);
  info.line = b;
  for (std::string* text : {&info.file, &info.function}) {
    std::uint64_t n = 0;
    if (!read_varint_bounded(p, end, n) || n > max_frame_text ||
        static_cast<std::uint64_t>(end - p) < n) {
      return "truncated or corrupt frame record";
    }
    text->assign(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  return table.add_frame(id, std::move(info));
}

void append_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

namespace {
// Escapes at most max_frame_text bytes of `text`, and stops before the escaped form passes 1800
// bytes, so that a frame line (two names) stays under the reader's 4096-byte line limit.
std::string escape_bounded(std::string_view text) {
  std::string out;
  std::size_t taken = 0;
  for (; taken < text.size() && taken < max_frame_text; ++taken) {
    std::string one = escape_field(text.substr(taken, 1));
    if (out.size() + one.size() > 1800) break;
    out += one;
  }
  return taken == 0 ? std::string("%") : out;
}
}  // namespace

void append_frame_text(std::string& out, std::uint64_t id, const frame_info& f) {
  out.append("frame ").append(std::to_string(id)).append(" ").append(to_string(f.lang));
  out.append(" ").append(std::to_string(f.line)).append(" ").append(escape_bounded(f.file));
  out.append(" ").append(escape_bounded(f.function)).push_back('\n');
}

void append_stack_text(std::string& out, std::uint64_t id, std::uint64_t parent,
                       std::uint64_t frame) {
  out.append("stack ").append(std::to_string(id)).append(" ").append(std::to_string(parent));
  out.append(" ").append(std::to_string(frame)).push_back('\n');
}

void append_frame_binary(std::string& out, std::uint64_t id, const frame_info& f) {
  out.push_back(static_cast<char>(5));
  append_varint(out, id);
  append_varint(out, static_cast<std::uint64_t>(f.lang));
  append_varint(out, f.line);
  for (const std::string* text : {&f.file, &f.function}) {
    const std::size_t n = std::min(text->size(), max_frame_text);
    append_varint(out, n);
    out.append(*text, 0, n);
  }
}

void append_stack_binary(std::string& out, std::uint64_t id, std::uint64_t parent,
                         std::uint64_t frame) {
  out.push_back(static_cast<char>(6));
  append_varint(out, id);
  append_varint(out, parent);
  append_varint(out, frame);
}

}  // namespace clpool::trace
