#include "trace/rmm_import.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iostream>
#include <string_view>
#include <vector>

namespace clpool::trace {
namespace {

constexpr std::string_view expected_header = "Thread,Time,Action,Pointer,Size,Stream";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string quote(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < 60; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out + (s.size() > 60 ? "...'" : "'");
}

bool parse_number(std::string_view s, std::uint64_t& v, int base) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// A pointer or stream: 0x-hex, decimal, or the spellings of null.
bool parse_address(std::string_view s, std::uint64_t& v) {
  if (s == "(nil)" || s == "nil" || s == "nullptr" || s == "NULL") {
    v = 0;
    return true;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return parse_number(s.substr(2), v, 16);
  return parse_number(s, v, 10);
}

// Digits of a fraction of a second, as nanoseconds ("5" -> 500000000).
bool parse_fraction(std::string_view s, std::uint64_t& ns) {
  if (s.empty() || s.size() > 9) return false;
  std::uint64_t v = 0;
  if (!parse_number(s, v, 10)) return false;
  for (std::size_t i = s.size(); i < 9; ++i) v *= 10;
  ns = v;
  return true;
}

// A day that exists in the Gregorian calendar (2024-02-29 does, 2024-13-45 and 2023-02-29 not).
bool is_calendar_date(std::uint64_t y, std::uint64_t m, std::uint64_t d) {
  static constexpr unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= days[m - 1] + (m == 2 && leap ? 1u : 0u);
}

// Text, then a CR inside the row: old-Mac line ends, read as one long row (binary garbage has
// unprintable bytes before any CR, and is reported as a bad row instead).
bool has_inner_cr(std::string_view row) {
  for (std::size_t i = 0; i + 1 < row.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(row[i]);
    if (c == '\r') return i > 0;
    if (c != '\t' && (c < 0x20 || c > 0x7e)) return false;
  }
  return false;
}

constexpr const char* cr_only_problem =
    "lines end in a bare CR (classic Mac line ends), not LF or CRLF; convert with tr '\\r' '\\n'";

// Seconds since the epoch with an optional fraction, HH:MM:SS[.:]frac, or a date and a time.
bool parse_time(std::string_view s, std::uint64_t& ns) {
  if (const std::size_t space = s.find(' '); space != std::string_view::npos) {
    // "YYYY-MM-DD HH:MM:SS.fff": the date only orders days; count them roughly (days since year
    // 0 by 31-day months is monotone, which is all an informational clock needs).
    const std::string_view date = s.substr(0, space);
    std::uint64_t y = 0, m = 0, d = 0;
    if (date.size() != 10 || date[4] != '-' || date[7] != '-' ||
        !parse_number(date.substr(0, 4), y, 10) || !parse_number(date.substr(5, 2), m, 10) ||
        !parse_number(date.substr(8, 2), d, 10) || !is_calendar_date(y, m, d)) {
      return false;
    }
    std::uint64_t t = 0;
    if (!parse_time(s.substr(space + 1), t)) return false;
    ns = ((y * 12 + m) * 31 + d) * 86400ull * 1000000000ull + t;
    return true;
  }
  if (s.find(':') != std::string_view::npos) {
    std::uint64_t h = 0, mi = 0, sec = 0, frac = 0;
    if (s.size() < 8 || s[2] != ':' || s[5] != ':' || !parse_number(s.substr(0, 2), h, 10) ||
        !parse_number(s.substr(3, 2), mi, 10) || !parse_number(s.substr(6, 2), sec, 10) || h > 23 ||
        mi > 59 || sec > 60) {
      return false;
    }
    if (s.size() > 8) {
      if (s[8] != '.' && s[8] != ':') return false;
      if (!parse_fraction(s.substr(9), frac)) return false;
    }
    ns = ((h * 60 + mi) * 60 + sec) * 1000000000ull + frac;
    return true;
  }
  const std::size_t dot = s.find('.');
  std::uint64_t sec = 0, frac = 0;
  if (!parse_number(s.substr(0, dot), sec, 10) || sec > 18000000000ull) return false;
  if (dot != std::string_view::npos && !parse_fraction(s.substr(dot + 1), frac)) return false;
  ns = sec * 1000000000ull + frac;
  return true;
}

}  // namespace

rmm_csv_reader::rmm_csv_reader(std::unique_ptr<std::istream> in, std::string name,
                               std::uint64_t total)
    : in_(std::move(in)), name_(std::move(name)), total_(total) {}

rmm_csv_reader::rmm_csv_reader(const std::string& path)
    : name_(path == "-" ? std::string("<stdin>") : path) {
  if (path == "-") {
    // Not owned: a stream on std::cin's buffer (no size, so no percentage in progress).
    in_ = std::make_unique<std::istream>(std::cin.rdbuf());
    read_header();
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw trace_error(path, 0, std::string("cannot open: ") + std::strerror(EISDIR), 0);
  }
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) throw trace_error(path, 0, std::string("cannot open: ") + std::strerror(errno), 0);
  file->seekg(0, std::ios::end);
  const auto size = file->tellg();
  file->seekg(0, std::ios::beg);
  total_ = size > 0 ? static_cast<std::uint64_t>(size) : 0;
  in_ = std::move(file);
  read_header();
}

rmm_csv_reader rmm_csv_reader::from_string(std::string text, std::string name) {
  const std::uint64_t total = text.size();
  rmm_csv_reader r(std::make_unique<std::istringstream>(std::move(text)), std::move(name), total);
  r.read_header();
  return r;
}

void rmm_csv_reader::fail(std::string problem) {
  error_ = std::make_unique<trace_error>(name_, line_, std::move(problem), seq_);
  throw *error_;
}

trace_error rmm_csv_reader::error_at_last_event(std::string problem) const {
  return trace_error(name_, event_line_, std::move(problem), seq_ == 0 ? 0 : seq_ - 1);
}

bool rmm_csv_reader::read_row() {
  row_.clear();
  row_unterminated_ = false;
  std::streambuf* buf = in_->rdbuf();
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in_->setstate(std::ios::eofbit);
      row_unterminated_ = !row_.empty();
      return !row_.empty();
    }
    if (c == '\n') return true;
    if (row_.size() == max_line_bytes) {
      fail("row is longer than " + std::to_string(max_line_bytes) +
           " bytes: not an RMM log (rows are a few dozen bytes)");
    }
    row_ += static_cast<char>(c);
  }
}

void rmm_csv_reader::read_header() {
  line_ = 1;
  if (!read_row()) {
    if (in_->bad()) fail(std::string("read error: ") + std::strerror(errno));
    fail("empty: no header (expected '" + std::string(expected_header) + "')");
  }
  consumed_ += row_.size() + 1;
  if (has_inner_cr(row_)) fail(cr_only_problem);
  if (row_.rfind("\xEF\xBB\xBF", 0) == 0) {
    fail(
        "starts with a UTF-8 byte-order mark (bytes EF BB BF) before its header; an RMM log starts "
        "with '" +
        std::string(expected_header) + "': remove the mark (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)");
  }
  if (trim(row_) != expected_header) {
    fail("not an RMM log: the header is " + quote(row_) + ", expected '" +
         std::string(expected_header) + "'");
  }
}

std::uint64_t rmm_csv_reader::small_id(flat_id_map<std::uint64_t>& ids, std::uint64_t key,
                                       bool zero_is_zero) {
  if (zero_is_zero && key == 0) return 0;
  if (const std::uint64_t* v = ids.find(key)) return *v;
  const std::uint64_t id = ids.size() + (zero_is_zero ? 1 : 0);
  ids.insert(key, id);
  return id;
}

namespace {

// A row's comma-separated fields, each trimmed (the CSV has no quoting).
std::vector<std::string_view> split_fields(std::string_view rest) {
  std::vector<std::string_view> f;
  for (;;) {
    const std::size_t comma = rest.find(',');
    f.push_back(trim(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return f;
}

}  // namespace

bool rmm_csv_reader::next(trace_event& out) {
  if (error_) throw *error_;
  for (;;) {
    ++line_;  // before reading: an overlong row is reported on its own line
    if (!read_row()) {
      --line_;
      if (in_->bad()) fail("read error");
      return false;
    }
    consumed_ += row_.size() + 1;
    if (has_inner_cr(row_)) fail(cr_only_problem);
    if (row_unterminated_) fail("truncated: the last row " + quote(row_) + " has no newline");
    if (!trim(row_).empty()) break;
  }
  const std::vector<std::string_view> f = split_fields(row_);
  if (f.size() != 6) {
    fail(std::to_string(f.size()) + " fields: expected 6 (Thread,Time,Action,Pointer,Size,Stream)");
  }
  trace_event e;
  std::uint64_t thread = 0, time = 0, pointer = 0, stream = 0;
  if (!parse_number(f[0], thread, 10))
    fail("Thread " + quote(f[0]) + " is not a decimal thread id");
  if (!parse_time(f[1], time)) {
    fail("Time " + quote(f[1]) +
         " is not a time (seconds since the epoch, HH:MM:SS.ffffff, or YYYY-MM-DD HH:MM:SS.fff on "
         "a real calendar day)");
  }
  if (f[2] == "allocate") {
    e.action = trace_action::alloc;
  } else if (f[2] == "free" || f[2] == "deallocate") {
    e.action = trace_action::free;
  } else if (f[2] == "allocate failure" || f[2] == "allocate_failure") {
    e.action = trace_action::alloc_failed;
  } else {
    fail("Action " + quote(f[2]) + " is unknown (expected allocate, free or allocate failure)");
  }
  if (!parse_address(f[3], pointer))
    fail("Pointer " + quote(f[3]) + " is not a 0x-hex or decimal address");
  if (!f[4].empty() && f[4][0] == '-') fail("Size " + quote(f[4]) + " is negative");
  if (!parse_number(f[4], e.size, 10)) fail("Size " + quote(f[4]) + " is not a decimal byte count");
  if (e.size > max_event_size) fail("Size " + quote(f[4]) + " is above 2^62: corrupt input");
  if (!parse_address(f[5], stream))
    fail("Stream " + quote(f[5]) + " is not a 0x-hex or decimal stream");

  if (pointer == 0 && e.size == 0 && e.action != trace_action::alloc_failed) {
    // Zero-byte allocations may all return null, and several may be outstanding: each gets its
    // own id from the top of the id space (no real pointer is there), freed last-in first-out.
    if (e.action == trace_action::alloc) {
      e.id = null_id_base - null_live_++;
    } else {
      if (null_live_ == 0)
        fail("free of pointer " + quote(f[3]) + ", which is not live (no zero-byte allocation is)");
      e.id = null_id_base - --null_live_;
    }
  } else if (e.action == trace_action::alloc) {
    if (!live_.insert(pointer, line_)) {
      fail("allocate of pointer " + quote(f[3]) + ", which is already live (allocated at line " +
           std::to_string(*live_.find(pointer)) + " and not freed)");
    }
    e.id = pointer;
  } else if (e.action == trace_action::free) {
    if (!live_.erase(pointer)) {
      fail("free of pointer " + quote(f[3]) +
           ", which is not live (never allocated, or already freed)");
    }
    e.id = pointer;
  }
  if (!first_time_ns_) first_time_ns_ = time;
  e.time_ns = time >= *first_time_ns_ ? time - *first_time_ns_ : 0;
  e.thread = small_id(threads_, thread, false);
  e.queue = small_id(streams_, stream, true);
  e.seq = seq_++;
  event_line_ = line_;
  out = e;
  return true;
}

}  // namespace clpool::trace
