// --format json: the same content as the text report, for programs (stable keys, byte counts
// as integers; report_format.h).
#include "tools/replay/output_writer.h"

namespace clpool::replay_cli {

using replay::to_json;

namespace {

class json_writer final : public output_writer {
 public:
  std::string_view name() const override { return "json"; }
  std::string_view description() const override {
    return "the report as JSON (--json: on standard output)";
  }
  std::optional<std::string> render(const run_output& run, std::string&) const override {
    return to_json(run.results, run.input, run.exit_code).dump(2) + "\n";
  }
};

const writer_registration registered(std::make_unique<json_writer>());

}  // namespace
}  // namespace clpool::replay_cli
