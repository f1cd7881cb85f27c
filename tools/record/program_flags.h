// The command line of `clpool record` and `clpool sweep`: flags, then the program to run with its
// own arguments. CLI11 cannot stop at the program (its arguments may look like our flags), so the
// two subcommands share this one scanner, and each keeps only what its flags mean.
#ifndef CLPOOL_TOOLS_RECORD_PROGRAM_FLAGS_H_
#define CLPOOL_TOOLS_RECORD_PROGRAM_FLAGS_H_

#include <functional>
#include <string>
#include <vector>

namespace clpool::record {

// What a subcommand accepts besides --help / -h.
struct flag_grammar {
  std::vector<std::string> value_flags;  // --flag VALUE or --flag=VALUE, each at most once
  std::vector<std::string> bare_flags;   // --flag, no value, may repeat
  std::string help_hint;                 // "clpool sweep --help", for an unknown flag
};

// Reads `args` (what follows the subcommand) up to the program: after `--`, or at the first
// argument that does not start with '-'. Calls `on_value(flag, value)` for each value flag in
// order (value "" when none follows: the callback says it needs one) and `on_bare(flag)` for each
// bare flag; the first non-empty string either returns is the error. --help or -h stops the scan
// with `help` set. Other errors, each one line: an unknown flag ("did you mean"), a bare flag
// given a value, a value flag given twice. Returns "" or the error; `program` gets the rest.
std::string scan_program_flags(
    const std::vector<std::string>& args, const flag_grammar& grammar, bool& help,
    std::vector<std::string>& program,
    const std::function<std::string(const std::string& flag, const std::string& value)>& on_value,
    const std::function<void(const std::string& flag)>& on_bare);

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_PROGRAM_FLAGS_H_
