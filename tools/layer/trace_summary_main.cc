// trace_summary TRACE: prints what trace/trace_summary.h says about a trace.
// Exit status: 0 for a valid trace, 1 for a malformed one (the reader's error on stderr), 2 for
// bad usage or a summary that could not be written.
#include <cstdio>
#include <string>

#include "common/output_file.h"
#include "common/text_escape.h"
#include "trace/trace_summary.h"

constexpr const char* usage =
    "usage: trace_summary TRACE\n"
    "Reads a clpool trace strictly and prints one 'key: value' per line: events, counts per "
    "action\n"
    "and kind, peak_device_bytes, live_at_end, first_alloc_failed, size_refusals (requests\n"
    "refused for their size), first-use failures and the trace's comments.\n"
    "Exit status: 0 valid trace, 1 malformed trace, 2 bad usage or output lost.\n";

int main(int argc, char** argv) {
  clpool::common::guard_standard_streams();
  const std::string arg = argc == 2 ? argv[1] : "";
  if (arg == "--help" || arg == "-h") {
    std::fputs(usage, stdout);
    return clpool::common::standard_output_written("trace_summary") ? 0 : 2;
  }
  if (argc != 2 || arg.empty() || (arg.size() > 1 && arg[0] == '-')) {
    if (argc == 2 && !arg.empty())
      std::fprintf(stderr, "trace_summary: unknown option '%s'\n",
                   clpool::common::escape_text(argv[1]).c_str());
    std::fputs(usage, stderr);
    return 2;
  }
  const bool valid = clpool::trace::print_trace_summary(arg, stdout, stderr);
  if (!clpool::common::standard_output_written("trace_summary")) return 2;
  return valid ? 0 : 1;
}
