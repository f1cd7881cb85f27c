#include "tools/replay/outputs.h"

namespace clpool::replay {

void refuse_clobbering(const std::vector<common::named_input>& inputs, const output_paths& out) {
  common::refuse_overlaps({.inputs = inputs,
                           .outputs = {{"--write-trace", out.write_trace},
                                       {"--svg", out.svg},
                                       {"standard output", "-"}}});
}

void write_text_file(const std::string& flag, const std::string& path, const std::string& text) {
  common::atomic_output_file f(path, flag);
  f.stream() << text;
  f.commit();
}

}  // namespace clpool::replay
