#include "tools/record/program_flags.h"

#include <algorithm>
#include <cstddef>

#include "common/cli.h"

namespace clpool::record {
namespace {

bool one_of(const std::vector<std::string>& names, const std::string& flag) {
  return std::find(names.begin(), names.end(), flag) != names.end();
}

}  // namespace

std::string scan_program_flags(
    const std::vector<std::string>& args, const flag_grammar& grammar, bool& help,
    std::vector<std::string>& program,
    const std::function<std::string(const std::string& flag, const std::string& value)>& on_value,
    const std::function<void(const std::string& flag)>& on_bare) {
  std::vector<std::string> seen;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program
    if (arg == "--help" || arg == "-h") {
      help = true;
      return "";
    }
    const std::size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    if (one_of(grammar.bare_flags, flag) || flag == "--help") {
      if (eq != std::string::npos) return flag + " takes no value";
      on_bare(flag);
      continue;
    }
    if (!one_of(grammar.value_flags, flag)) {
      std::vector<std::string> all = grammar.value_flags;
      all.insert(all.end(), grammar.bare_flags.begin(), grammar.bare_flags.end());
      all.push_back("--help");
      return common::unknown_option(arg, all, grammar.help_hint);
    }
    if (one_of(seen, flag)) return common::given_twice(flag);
    seen.push_back(flag);
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && args[i + 1] != "--") {
      value = args[++i];  // `--budget -- prog`: no value ('--' starts the program)
    }
    if (std::string error = on_value(flag, value); !error.empty()) return error;
  }
  program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return "";
}

}  // namespace clpool::record
