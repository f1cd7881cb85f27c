#include "tools/replay/outputs.h"

namespace clpool::replay {

void refuse_clobbering(const std::vector<common::named_input>& inputs, const output_paths& out) {
  common::refuse_if_same_file("--write-trace", out.write_trace, inputs);
  common::refuse_if_same_file("--svg", out.svg, inputs);
  common::refuse_if_same_file("standard output", "-", inputs);
  if (!out.svg.empty() && !out.write_trace.empty() &&
      (out.svg == out.write_trace || common::same_file(out.svg, out.write_trace))) {
    throw common::output_error("--svg: '" + out.svg + "' is also the --write-trace output; "
                               "give them different files");
  }
}

void write_text_file(const std::string& flag, const std::string& path, const std::string& text) {
  common::atomic_output_file f(path, flag);
  f.stream() << text;
  f.commit();
}

}  // namespace clpool::replay
