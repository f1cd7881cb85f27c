#include "common/cli11.h"

#include <cstdio>
#include <iostream>
#include <regex>

#include "common/cli.h"

namespace clpool::common {
namespace {

constexpr char help[] = "--help";

// CLI11's own words for a count of values, "NAME: At Most 1 required but received 2" and
// "NAME: 1 required TEXT missing": the only place that reads them.
std::string counted_message(const std::string& what) {
  static const std::regex at_most(R"(^(\S+): At Most (\d+) required but received (\d+)$)");
  static const std::regex missing(R"(^(\S+): \d+ required \S+ missing$)");
  static const std::regex at_least(R"(^(\S+): At least (\d+) required but received (\d+)$)");
  std::smatch m;
  if (std::regex_match(what, m, at_most)) {
    // An option of k values (--compare A B) given r values: r / k times, or a wrong count.
    const std::size_t k = std::stoul(m[2].str()), r = std::stoul(m[3].str());
    if (k <= 1 || r % k == 0) return given_twice(m[1].str(), k <= 1 ? r : r / k);
    return m[1].str() + ": takes " + std::to_string(k) + " values, got " + std::to_string(r);
  }
  if (std::regex_match(what, m, at_least) && m[3].str() != "0") {
    return m[1].str() + ": takes " + m[2].str() + " values, got " + m[3].str();
  }
  if (std::regex_match(what, m, missing) || std::regex_match(what, m, at_least)) {
    return needs_value(m[1].str());
  }
  return "";
}

// CLI11's words for a flag given a value ("Could not convert: --json = x.json") and for a number
// out of its range ("NAME: Value 99 not in range 0 to 12"), in the tools' words.
std::string value_message(const std::string& what) {
  static const std::regex flag_value(R"(^Could not convert: (--\S+) = (.*)$)");
  static const std::regex out_of_range(R"(^(\S+): Value (.*) not in range (\S+) to (\S+)$)");
  std::smatch m;
  if (std::regex_match(what, m, flag_value)) {
    return m[1].str() + " takes no value (given '" + m[2].str() + "')";
  }
  if (std::regex_match(what, m, out_of_range)) {
    return m[1].str() + ": '" + m[2].str() + "' is not a number from " + m[3].str() + " to " +
           m[4].str();
  }
  return "";
}

}  // namespace

std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  }
  return names;
}

std::string cli11_error_message(const CLI::App& app, const CLI::ParseError& error) {
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    std::vector<std::string> positional;  // after a "--", nothing is an option
    bool options_end = false;
    for (const std::string& extra : app.remaining()) {
      if (extra == "--" && !options_end) {
        options_end = true;
      } else if (!options_end && extra.size() >= 2 && extra[0] == '-') {
        return unknown_option(extra, long_option_names(app), help);
      } else {
        positional.push_back(extra);
      }
    }
    if (!positional.empty()) return unexpected_argument(positional.front(), help);
  }
  std::string what = error.what();
  if (std::string counted = counted_message(what); !counted.empty()) return counted;
  if (std::string value = value_message(what); !value.empty()) return value;
  for (char& c : what) {
    if (c == '\n') c = ' ';
  }
  return what + " (see " + help + ")";
}

std::string empty_value_error(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional() || o->get_type_size() == 0 || o->count() == 0) continue;
    for (const std::string& value : o->results()) {
      if (value.empty()) return needs_value(o->get_name());
    }
  }
  return "";
}

std::string empty_assignment_error(const CLI::App& app, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 4 || arg.substr(0, 2) != "--" || arg.back() != '=') continue;
    const std::string name(arg.substr(0, arg.size() - 1));
    for (const std::string& known : long_option_names(app)) {
      if (known == name) return needs_value(name);
    }
  }
  return "";
}

std::optional<int> parse_cli(CLI::App& app, int argc, const char* const* argv,
                             const std::string& tool) {
  // CLI11 gives `--output=` the next argument as its value (`--output= --force` writes to a
  // file called --force): refused before it can.
  if (const std::string empty = empty_assignment_error(app, argc, argv); !empty.empty()) {
    return report_usage_error(tool, empty);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e) == 0 ? exit_ok : exit_usage;
  } catch (const CLI::ParseError& e) {
    return report_usage_error(tool, cli11_error_message(app, e));
  }
  if (const std::string empty = empty_value_error(app); !empty.empty()) {
    return report_usage_error(tool, empty);
  }
  return std::nullopt;
}

}  // namespace clpool::common
