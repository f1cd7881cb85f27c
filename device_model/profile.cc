#include "device_model/profile.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <functional>
#include <iterator>
#include <optional>

#include "common/byte_size.h"
#include "common/cl_status.h"
#include "common/input_file.h"
#include "common/text_escape.h"

namespace clpool::device_model {

// Built in from profiles/*.profile by the :builtin_profiles genrule.
struct builtin_profile_text {
  const char* name;
  const char* text;
};
extern const builtin_profile_text builtin_profiles[];
extern const std::size_t builtin_profile_count;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

constexpr const char* known_keys =
    "name, oom_at, svm_oom_at, oom_status, headroom, page, pack_limit, pack_granule, "
    "max_alloc_enforced, commands_finish";

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(refusal_point point) {
  return refusal_point_names[static_cast<std::size_t>(point)];
}

std::optional<refusal_point> parse_refusal_point(std::string_view word) {
  for (std::size_t i = 0; i < std::size(refusal_point_names); ++i) {
    if (word == refusal_point_names[i]) return static_cast<refusal_point>(i);
  }
  return std::nullopt;
}

std::string_view to_string(command_completion completion) {
  return command_completion_names[static_cast<std::size_t>(completion)];
}

std::optional<command_completion> parse_command_completion(std::string_view word) {
  for (std::size_t i = 0; i < std::size(command_completion_names); ++i) {
    if (word == command_completion_names[i]) return static_cast<command_completion>(i);
  }
  return std::nullopt;
}

namespace {

// parse_profile, and whether the text named the profile (`name = ...`).
// An out-of-memory status: a name from the one table (common/cl_status.h), or the code as a
// number; nullopt for anything else.
std::optional<std::int32_t> parse_oom_status(std::string_view value) {
  std::optional<std::int32_t> code = common::status_from_name(value);
  for (const std::int32_t oom :
       {common::status_mem_object_allocation_failure, common::status_out_of_resources,
        common::status_out_of_host_memory}) {
    if (value == std::to_string(oom)) code = oom;
  }
  if (code && common::is_out_of_memory_status(*code)) return code;
  return std::nullopt;
}

// Where each key was given: its line, for the messages of the rules between keys.
struct key_lines {
  std::vector<std::pair<std::string, std::size_t>> lines;
  std::size_t of(std::string_view key) const {
    for (const auto& [k, line] : lines) {
      if (k == key) return line;
    }
    return 0;
  }
};

// The prefix of a value error: "SOURCE:LINE: " for a key the text gave, else "SOURCE: ".
using where_fn = std::function<std::string(std::string_view key)>;

// The rules on the values, each error prefixed by `at(key)` for the key that breaks it; `other`
// says where another key of a rule between two was given ("page: line 3"), or nothing.
void check_values(const device_profile& p, const where_fn& at, const where_fn& other) {
  const auto bad = [&](std::string_view key, const std::string& why) {
    return profile_error(at(key) + std::string(key) + ": " + why);
  };
  // " (page: line 3)", or after words of the rule's own: " (one page; page: line 3)".
  const auto with = [&](std::string_view key, std::string words) {
    const std::string o = other(key);
    if (!words.empty() && !o.empty()) words += "; ";
    words += o;
    return words.empty() ? std::string() : " (" + words + ")";
  };
  if (!common::is_out_of_memory_status(p.oom_status)) {
    throw bad("oom_status", std::to_string(p.oom_status) + " is not -4, -5 or -6");
  }
  if (p.svm_oom_at == refusal_point::execution) {
    throw bad("svm_oom_at", "execution is not creation or first_use");
  }
  // No device is known to defer SVM while it commits buffers at creation, and a replay could not
  // model one (its device defers every block or none).
  if (p.svm_oom_at == refusal_point::first_use && p.oom_at == refusal_point::creation) {
    throw bad("svm_oom_at", "first_use needs oom_at first_use or execution" +
                                with("oom_at", "buffers at creation"));
  }
  if (p.page == 0) throw bad("page", "must be at least 1 byte");
  if (p.page > max_page) throw bad("page", std::to_string(p.page) + " bytes is more than 1 GiB");
  if (p.headroom > max_headroom) throw bad("headroom", "more than 1 TiB");
  if (p.pack_granule == 0) throw bad("pack_granule", "must be at least 1 byte");
  if (p.pack_limit > p.page) {
    throw bad("pack_limit", "larger than page" + with("page", "shared requests live in one page"));
  }
  if (p.pack_limit != 0 && p.page == 1) {
    throw bad("pack_limit", "needs a page larger than 1 byte" + with("page", "page 1 byte"));
  }
  if (p.pack_limit != 0 && p.pack_granule > p.pack_limit) {
    throw bad("pack_granule", "larger than pack_limit" + with("pack_limit", ""));
  }
  if (p.pack_limit != 0 && p.page % p.pack_granule != 0) {
    throw bad("pack_granule", "does not divide page" + with("page", ""));
  }
  if (p.pack_limit != 0 && p.page / p.pack_granule > max_granules_per_page) {
    throw bad("pack_granule", "a page would hold more than 65536 of them" + with("page", ""));
  }
  if (p.pack_limit == 0 && p.pack_granule != 1) {
    throw bad("pack_granule", "set without pack_limit (nothing is packed)");
  }
}

// What the first bytes say before any line is read: a mark an editor added, or bare-CR line ends
// (which would make the whole file one line; one line ending in a CR alone is read as before).
// The trace reader's words (trace/trace_reader.cc).
void check_encoding(std::string_view text, std::string_view source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    throw profile_error(std::string(source) +
                        ":1: starts with a UTF-8 byte-order mark (bytes EF BB BF) before its "
                        "first key; remove the mark (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)");
  }
  const std::size_t cr = text.find('\r');
  if (cr != std::string_view::npos && cr + 1 < text.size() && text[cr + 1] != '\n' &&
      text.substr(0, cr).find('\n') == std::string_view::npos) {
    throw profile_error(std::string(source) +
                        ":1: lines end in a bare CR (classic Mac line ends), not LF or CRLF; "
                        "convert with tr '\\r' '\\n'");
  }
}

// One `key = value` line into `p`; `bad(why)` makes the error naming the line and the key.
void parse_value(device_profile& p, const std::string& key, std::string_view value,
                 const std::function<profile_error(const std::string&)>& bad, bool& named) {
  const auto size = [&]() {
    std::string why;
    const std::optional<std::uint64_t> v = common::parse_byte_size(value, why);
    if (!v) throw bad(why);
    return *v;
  };
  if (key == "name") {
    if (!valid_name(value)) throw bad("is not a name (letters, digits, '_', '-', '.'; at most 64)");
    p.name = std::string(value);
    named = true;
  } else if (key == "oom_at" || key == "svm_oom_at") {
    const bool svm = key == "svm_oom_at";  // an SVM block is never refused in an event
    const std::optional<refusal_point> at = parse_refusal_point(value);
    if (!at || (svm && *at == refusal_point::execution))
      throw bad(svm ? "is not creation or first_use" : "is not creation, first_use or execution");
    (svm ? p.svm_oom_at : p.oom_at) = *at;
  } else if (key == "oom_status") {
    const std::optional<std::int32_t> code = parse_oom_status(value);
    if (!code) {
      throw bad(
          "is not an out-of-memory status (-4 CL_MEM_OBJECT_ALLOCATION_FAILURE, -5 "
          "CL_OUT_OF_RESOURCES, -6 CL_OUT_OF_HOST_MEMORY)");
    }
    p.oom_status = *code;
  } else if (key == "headroom" || key == "page" || key == "pack_limit" || key == "pack_granule") {
    (key == "headroom"     ? p.headroom
     : key == "page"       ? p.page
     : key == "pack_limit" ? p.pack_limit
                           : p.pack_granule) = size();
  } else if (key == "max_alloc_enforced") {
    if (value != "yes" && value != "no") throw bad("is not yes or no");
    p.max_alloc_enforced = value == "yes";
  } else if (key == "commands_finish") {
    const std::optional<command_completion> c = parse_command_completion(value);
    if (!c) throw bad("is not promptly or at_wait");
    p.commands_finish = *c;
  }
}

bool known_key(std::string_view key) {
  for (std::string_view k :
       {"name", "oom_at", "svm_oom_at", "oom_status", "headroom", "page", "pack_limit",
        "pack_granule", "max_alloc_enforced", "commands_finish"}) {
    if (key == k) return true;
  }
  return false;
}

// parse_profile, with whether the text named the profile (`name = ...`) and where each key was.
device_profile parse_profile_text(std::string_view text, std::string_view source, bool& named,
                                  key_lines& lines) {
  check_encoding(text, source);
  device_profile p;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = trim(line);
    if (line.empty()) continue;
    const std::string where = std::string(source) + ":" + std::to_string(line_no) + ": ";
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      throw profile_error(where + "expected 'key = value', got '" + common::escape_text(line) +
                          "'");
    }
    // Keys and values as the text rule shows them: a control byte never reaches the terminal,
    // and an invisible one is seen.
    const std::string key(trim(line.substr(0, eq)));
    const std::string_view value = trim(line.substr(eq + 1));
    const auto bad = [&](const std::string& why) {
      return profile_error(where + key + ": '" + common::escape_text(value) + "' " + why);
    };
    if (!known_key(key)) {
      throw profile_error(where + "unknown key '" + common::escape_text(key) +
                          "' (known: " + known_keys + ")");
    }
    if (const std::size_t first = lines.of(key); first != 0) {
      throw profile_error(where + key + ": given twice (first at line " + std::to_string(first) +
                          ")");
    }
    lines.lines.emplace_back(key, line_no);
    if (value.empty()) throw bad("is empty");
    parse_value(p, key, value, bad, named);
  }
  const auto at = [&](std::string_view key) {
    const std::size_t n = lines.of(key);
    return std::string(source) + (n == 0 ? "" : ":" + std::to_string(n)) + ": ";
  };
  const auto other = [&](std::string_view key) {
    const std::size_t n = lines.of(key);
    return std::string(key) + (n == 0 ? ": not given, the default" : ": line " + std::to_string(n));
  };
  check_values(p, at, other);
  return p;
}

}  // namespace

device_profile parse_profile(std::string_view text, std::string_view source) {
  bool named = false;
  key_lines lines;
  return parse_profile_text(text, source, named, lines);
}

void validate_profile(const device_profile& p, std::string_view source) {
  if (!valid_name(p.name))
    throw profile_error(std::string(source) + ": name: '" + common::escape_text(p.name) +
                        "' is not a name (letters, digits, '_', '-', '.'; at most 64)");
  validate_profile_values(p, source);
}

void validate_profile_values(const device_profile& p, std::string_view source) {
  const auto at = [&](std::string_view) { return std::string(source) + ": "; };
  check_values(p, at, [](std::string_view) { return std::string(); });
}

std::vector<profile_field> profile_fields(const device_profile& p) {
  const auto bytes = [](std::uint64_t n) { return std::to_string(n) + "B"; };
  return {
      {"name", p.name},
      {"oom_at", std::string(to_string(p.oom_at))},
      {"oom_status", std::to_string(p.oom_status)},
      {"headroom", bytes(p.headroom)},
      {"page", bytes(p.page)},
      {"pack_limit", bytes(p.pack_limit)},
      {"pack_granule", bytes(p.pack_granule)},
      {"max_alloc_enforced", p.max_alloc_enforced ? "yes" : "no"},
      {"commands_finish", std::string(to_string(p.commands_finish))},
      {"svm_oom_at", std::string(to_string(p.svm_oom_at))},
  };
}

std::vector<std::string_view> differing_fields(const device_profile& a, const device_profile& b) {
  const std::vector<profile_field> fa = profile_fields(a), fb = profile_fields(b);
  std::vector<std::string_view> keys;
  for (std::size_t i = 0; i < fa.size(); ++i) {
    if (fa[i].key != "name" && fa[i].value != fb[i].value) keys.push_back(fa[i].key);
  }
  return keys;
}

std::string format_profile(const device_profile& p) {
  const std::vector<profile_field> defaults = profile_fields(device_profile{});
  const std::vector<profile_field> fields = profile_fields(p);
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    // Keys newer than the probe's first profiles are written only when they are not the
    // default, so that the profiles written before they existed read back unchanged.
    const bool newer = fields[i].key == "commands_finish" || fields[i].key == "svm_oom_at";
    if (newer && fields[i] == defaults[i]) continue;
    out += std::string(fields[i].key) + " = " + fields[i].value + "\n";
  }
  return out;
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < builtin_profile_count; ++i)
    names.emplace_back(builtin_profiles[i].name);
  return names;
}

std::string capacity_refusal(const device_profile& profile, std::uint64_t capacity,
                             std::string_view what) {
  if (capacity > profile.headroom) return "";
  return std::string(what) + " " + common::format_bytes_exact(capacity) +
         " is not more than the headroom of profile '" + profile.name + "', " +
         common::format_bytes_exact(profile.headroom) +
         ": nothing would be usable (give a larger capacity or another profile)";
}

bool names_profile_file(std::string_view name_or_path) {
  return name_or_path.find('/') != std::string_view::npos ||
         (name_or_path.size() > 8 && name_or_path.substr(name_or_path.size() - 8) == ".profile");
}

namespace {

std::string builtin_names_text() {
  std::string names;
  for (std::size_t i = 0; i < builtin_profile_count; ++i)
    names += std::string(names.empty() ? "" : ", ") + builtin_profiles[i].name;
  return names;
}

// A report names a profile by its name: a file named like a built-in ("name = nvidia") with
// other values would read as that built-in. Only a copy of the built-in itself (a shipped file
// read by its path) may take its name.
void refuse_builtin_name(const device_profile& p, const std::string& path, std::size_t line) {
  for (std::size_t i = 0; i < builtin_profile_count; ++i) {
    if (p.name != builtin_profiles[i].name) continue;
    const device_profile builtin = parse_profile(builtin_profiles[i].text, p.name);
    if (p == builtin) return;
    std::string keys;
    for (std::string_view k : differing_fields(p, builtin))
      keys += std::string(keys.empty() ? "" : ", ") + std::string(k);
    throw profile_error(path + ":" + std::to_string(line) + ": name: '" + p.name +
                        "' is a built-in profile's name (" + builtin_names_text() +
                        "), and this file's values are not that profile's (" + keys +
                        " differ): give the file a name of its own");
  }
}

}  // namespace

device_profile load_profile(std::string_view name_or_path) {
  const std::string arg(name_or_path);
  const bool is_path = names_profile_file(arg);
  if (!is_path) {
    for (std::size_t i = 0; i < builtin_profile_count; ++i) {
      if (arg == builtin_profiles[i].name) {
        return parse_profile(builtin_profiles[i].text, arg + ".profile (built in)");
      }
    }
    throw profile_error("profile '" + arg + "': no such built-in profile (" + builtin_names_text() +
                        "); a profile file's path must contain '/' or end in .profile");
  }
  struct stat st;
  if (::stat(arg.c_str(), &st) != 0) {
    throw profile_error("profile file " + arg + ": cannot be opened: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    throw profile_error("profile file " + arg + ": cannot be read: not a regular file");
  if (st.st_size > 64 * 1024) throw profile_error("profile file " + arg + ": larger than 64 KiB");
  // Read with the same bound: the file may have grown since stat().
  std::string why;
  const std::optional<std::string> text = common::read_bounded(arg, 64 * 1024, why);
  if (!text) throw profile_error("profile file " + arg + ": cannot be read: " + why);
  const std::string& s = *text;
  if (const std::size_t nul = s.find('\0'); nul != std::string::npos) {
    throw profile_error("profile file " + arg + ": not text (a NUL byte at byte " +
                        std::to_string(nul) + ")");
  }
  bool named = false;
  key_lines lines;
  device_profile p = parse_profile_text(s, arg, named, lines);
  // Reports name the profile: a file without `name =` is called by its path, never "exact", the
  // profile whose values it does not all have.
  if (!named) p.name = arg;
  refuse_builtin_name(p, arg, lines.of("name"));
  return p;
}

std::string_view to_string(alloc_semantics semantics) {
  return alloc_semantics_names[static_cast<std::size_t>(semantics)];
}

std::optional<alloc_semantics> parse_semantics(std::string_view word) {
  for (std::size_t i = 0; i < std::size(alloc_semantics_names); ++i) {
    if (word == alloc_semantics_names[i]) return static_cast<alloc_semantics>(i);
  }
  return std::nullopt;
}

alloc_semantics semantics_of(const device_profile& profile) {
  if (profile.oom_at != refusal_point::creation) return alloc_semantics::deferred;
  return profile.oom_status == common::status_out_of_host_memory ? alloc_semantics::host_oom
                                                                 : alloc_semantics::immediate;
}

}  // namespace clpool::device_model
