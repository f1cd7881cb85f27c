// --format text (the default on standard output): the full report for one configuration, a
// side-by-side table for several.
#include "tools/replay/output_writer.h"

namespace clpool::replay_cli {
namespace {

class text_writer final : public output_writer {
 public:
  std::string_view name() const override { return "text"; }
  std::string_view description() const override {
    return "the report for people (a table with --compare); the default on standard output";
  }
  std::optional<std::string> render(const run_output& run, std::string&) const override {
    return run.results.size() > 1 ? format_table(run.results, run.input)
                                  : format_text(run.results.at(0), run.input, run.full_stacks);
  }
};

const writer_registration registered(std::make_unique<text_writer>());

}  // namespace
}  // namespace clpool::replay_cli
