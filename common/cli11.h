// The one adapter between CLI11 and the tools' command-line conventions (cli.h): clpool_replay
// and clpool_probe parse with it, so a mistake is the same one line in every tool, and clpool
// record's own parser words its mistakes with the same functions (cli.h).
//
//   CLI::App app{"..."};   // options added as usual
//   if (const std::optional<int> rc = common::parse_cli(app, argc, argv, "clpool_probe")) return
//   *rc;
//
// What CLI11 says in two lines without the tool's name becomes "TOOL: error: WHAT" on one:
//   --capacity 1GiB --capacity 2GiB   -> "--capacity: given twice"
//   --compare (no value)              -> "--compare: needs a value"
//   a second positional argument      -> "unexpected argument 'b.trace' (see --help)"
//   --capcity 1GiB                    -> "unknown option '--capcity'; did you mean --capacity? ..."
//   --output "" (an empty value)      -> "--output: needs a value"
// and CLI11's checks (a range, a list of names, a number) keep their words, on one line.
#ifndef CLPOOL_COMMON_CLI11_H_
#define CLPOOL_COMMON_CLI11_H_

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace clpool::common {

// Parses argv with `app`. Returns the exit code when parsing ends the run: exit_ok after --help
// (printed on standard output), exit_usage after one "TOOL: error: ..." line on standard error
// (cli11_error_message). Nothing when the run goes on. An option given an empty value ("") is a
// mistake too: no option of a clpool tool means "nothing" by an empty string.
std::optional<int> parse_cli(CLI::App& app, int argc, const char* const* argv,
                             const std::string& tool);

// The one-line message for a parse error of `app` (for tests and parse_cli).
std::string cli11_error_message(const CLI::App& app, const CLI::ParseError& error);

// The first option of `app` given an empty value, as "NAME: needs a value"; "" when none was.
std::string empty_value_error(const CLI::App& app);

// "--NAME: needs a value" for an argument `--NAME=` with nothing after the '=' (before a "--"),
// NAME an option of `app`; "" when there is none. CLI11 would take the next argument as its value.
std::string empty_assignment_error(const CLI::App& app, int argc, const char* const* argv);

// Every long option name of `app`, with its dashes ("--capacity"), for "did you mean".
std::vector<std::string> long_option_names(const CLI::App& app);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_CLI11_H_
