#include "common/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/text_escape.h"

namespace clpool::common {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string suggest_option(std::string_view typed, const std::vector<std::string>& names) {
  if (const std::size_t eq = typed.find('='); eq != std::string_view::npos) {
    typed = typed.substr(0, eq);
  }
  std::string best;
  std::size_t best_distance = ~std::size_t{0};
  for (const std::string& name : names) {
    const std::size_t d = edit_distance(typed, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  const std::size_t core = best.size() > 2 ? best.size() - 2 : best.size();  // without "--"
  const std::size_t allowed = core <= 3 ? 1 : std::max<std::size_t>(2, core / 3);
  return best_distance <= allowed ? best : std::string();
}

std::string unknown_option(std::string_view typed, const std::vector<std::string>& names,
                           std::string_view help) {
  const std::string near = suggest_option(typed, names);
  const bool is_option = !typed.empty() && typed[0] == '-';
  return std::string("unknown ") + (is_option ? "option" : "command") + " '" + std::string(typed) +
         "'" + (near.empty() ? "" : "; did you mean " + near + "?") + " (see " + std::string(help) +
         ")";
}

std::string given_twice(std::string_view flag, std::size_t times) {
  return std::string(flag) + ": given " +
         (times == 2 ? std::string("twice") : std::to_string(times) + " times");
}

std::string needs_value(std::string_view flag) { return std::string(flag) + ": needs a value"; }

std::string unexpected_argument(std::string_view argument, std::string_view help) {
  return "unexpected argument '" + std::string(argument) + "' (see " + std::string(help) + ")";
}

std::uint64_t size_option(std::string_view text, std::string_view flag, size_rules rules) {
  std::string why;
  const bool positive = rules.positive;
  rules.positive = false;  // a zero has its own words
  const std::optional<std::uint64_t> v = parse_size(text, rules, why);
  if (!v) throw usage_error(std::string(flag) + ": '" + std::string(text) + "' " + why);
  if (positive && *v == 0) {
    throw usage_error(std::string(flag) + ": must be positive, got '" + std::string(text) + "'");
  }
  return *v;
}

std::string error_line(std::string_view tool, std::string_view message) {
  return std::string(tool) + ": error: " + escape_text(message);
}

int report_usage_error(std::string_view tool, std::string_view message) {
  std::fprintf(stderr, "%s\n", error_line(tool, message).c_str());
  return exit_usage;
}

std::string under_working_directory(const std::string& path) {
  if (path.empty() || path == "-" || path[0] == '/') return path;
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (dir == nullptr || *dir == '\0') return path;
  std::string out(dir);
  if (out.back() != '/') out += '/';
  return out + path;
}

}  // namespace clpool::common
