#include "tools/replay/outputs.h"

namespace clpool::replay {

void refuse_clobbering(const std::vector<common::named_input>& inputs,
                       const std::vector<named_output>& outputs) {
  common::io_files files{.inputs = inputs, .outputs = {}};
  for (const named_output& o : outputs) {
    if (!o.path.empty()) files.outputs.push_back({o.label, o.path});
  }
  files.outputs.push_back({"standard output", "-"});
  common::refuse_overlaps(files);
}

void write_text_file(const std::string& flag, const std::string& path, const std::string& text) {
  common::atomic_output_file f(path, flag);
  f.stream() << text;
  f.commit();
}

}  // namespace clpool::replay
