#include "tools/replay/outputs.h"

#include <exception>
#include <iostream>

#include "common/cli.h"

namespace clpool::replay_cli {

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

bool attempt_output(const std::string& label, const std::function<void()>& write) {
  try {
    write();
    return true;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const bool named = what.rfind(label + ":", 0) == 0;
    std::cerr << common::error_line("clpool_replay", (named ? "" : label + ": ") + what) << "\n";
    return false;
  }
}

}  // namespace clpool::replay_cli
