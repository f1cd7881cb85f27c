#include "tools/replay/outputs.h"

namespace clpool::replay {

void refuse_clobbering(const std::vector<common::named_input>& inputs,
                       const std::vector<named_output>& outputs) {
  for (const named_output& o : outputs) common::refuse_if_same_file(o.label, o.path, inputs);
  common::refuse_if_same_file("standard output", "-", inputs);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const named_output &a = outputs[i], &b = outputs[j];
      if (a.path.empty() || b.path.empty()) continue;
      if (a.path == b.path || common::same_file(a.path, b.path)) {
        throw common::output_error(a.label + ": '" + a.path + "' is also the " + b.label +
                                   " output; give them different files");
      }
    }
  }
}

void write_text_file(const std::string& flag, const std::string& path, const std::string& text) {
  common::atomic_output_file f(path, flag);
  f.stream() << text;
  f.commit();
}

}  // namespace clpool::replay
