// Output writers: every format clpool_replay can write its results in (--format NAME[=FILE]),
// registered in one registry. A new format is one file that defines an output_writer and
// registers it with a static writer_registration (see writer_text.cc), plus its name in the
// `writers` library's srcs in BUILD; main.cc and the other writers do not change.
//
//   const output_writer* w = find_writer("json");
//   std::string note;
//   if (auto text = w->render(run, note)) ... write *text ...
#ifndef CLPOOL_TOOLS_REPLAY_OUTPUT_WRITER_H_
#define CLPOOL_TOOLS_REPLAY_OUTPUT_WRITER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/replay/report_format.h"

namespace clpool::replay_cli {

// Everything a run produced, as every writer receives it.
struct run_output {
  std::string input;                           // the trace or CSV, as the user named it
  std::vector<replay::config_result> results;  // one per configuration, in --compare order
  int exit_code = 0;                           // what clpool_replay will exit with
  std::string
      trace_path;  // the clpool trace read ("" for an RMM CSV), for writers that read it again
  bool full_stacks = false;  // --full-stacks
};

class output_writer {
 public:
  virtual ~output_writer() = default;
  // The name --format takes ("text", "json", "svg").
  virtual std::string_view name() const = 0;
  // One line for --help.
  virtual std::string_view description() const = 0;
  // True when the writer draws the first configuration's timeline: the engine then samples it
  // (replay_options::timeline), which costs time, so only when a writer asks.
  virtual bool needs_timeline() const { return false; }
  // True when the writer reads the clpool trace file again (run_output::trace_path): standard
  // input and an RMM CSV are refused before the replay, not after it.
  virtual bool reads_trace_again() const { return false; }
  // The output, or nothing when there is nothing to write (then `note` says why). `note` may
  // also say, for stderr, what was written (e.g. which replay a picture shows).
  virtual std::optional<std::string> render(const run_output& run, std::string& note) const = 0;
};

// Adds `writer` to the registry. Two writers with one name is a programming error: aborts.
void register_writer(std::unique_ptr<output_writer> writer);

// The registered writer called `name`, or null.
const output_writer* find_writer(std::string_view name);

// Every registered writer, by name.
std::vector<const output_writer*> all_writers();

// A static instance of this in a writer's file registers it before main() runs.
struct writer_registration {
  explicit writer_registration(std::unique_ptr<output_writer> writer) {
    register_writer(std::move(writer));
  }
};

// One output asked for on the command line: a writer and where it goes.
struct output_request {
  const output_writer* writer = nullptr;
  std::string path;   // "" = standard output
  std::string label;  // how the user asked for it, for messages: "--format svg", "--svg", "--json"
};

// One output as the command line asked for it, in the one grammar NAME[=FILE] (FILE '-' is
// standard output): --format's values, and its aliases translated by the command line in their
// order (--html FILE: "html=FILE", labelled "--format html"; --json: "json", labelled "--json";
// --svg FILE: "svg=FILE", labelled "--svg").
struct format_arg {
  std::string spec;        // NAME or NAME=FILE
  std::string label = {};  // how the user asked, for messages; "" means "--format NAME"
};

// Parses the outputs asked for. At most one goes to standard output; when none does, the text
// report goes there. Throws config_error naming the value for an unknown format (with the known
// ones), an empty file name, or two outputs on standard output.
std::vector<output_request> parse_output_requests(const std::vector<format_arg>& formats);

}  // namespace clpool::replay_cli

#endif  // CLPOOL_TOOLS_REPLAY_OUTPUT_WRITER_H_
