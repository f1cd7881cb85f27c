// --format svg: the timeline picture of the first configuration (svg.h).
#include "tools/replay/output_writer.h"
#include "tools/replay/svg.h"

namespace clpool::replay_cli {

using replay::config_result;
using replay::format_bytes_exact;
using replay::min_capacity_result;
using replay::replay_report;
using replay::to_string;

namespace {

class svg_writer final : public output_writer {
 public:
  std::string_view name() const override { return "svg"; }
  std::string_view description() const override {
    return "a self-contained SVG timeline of the first configuration, with a zoom on its "
           "out-of-memory (--svg FILE)";
  }
  bool needs_timeline() const override { return true; }

  std::optional<std::string> render(const run_output& run, std::string& note) const override {
    const config_result& first = run.results.at(0);
    const replay_report* r = first.replay ? &*first.replay : nullptr;
    std::string which = "the replay at --capacity";
    if (r == nullptr && first.min_capacity) {
      // With --min-capacity alone, the failure one granule below is the interesting picture.
      const min_capacity_result& m = *first.min_capacity;
      r = m.one_granule_below ? &*m.one_granule_below : (m.at_result ? &*m.at_result : nullptr);
      which = m.one_granule_below ? "the failing replay one granule below the minimum capacity"
                                  : "the clean replay at the minimum capacity";
    }
    if (r == nullptr) {
      note = "nothing written: no replay of " + to_string(first.config) + " to show";
      return std::nullopt;
    }
    note = which + ", " + to_string(first.config) + " on " + format_bytes_exact(r->device.capacity);
    return render_svg(*r, "clpool_replay: " + run.input);
  }
};

const writer_registration registered(std::make_unique<svg_writer>());

}  // namespace
}  // namespace clpool::replay_cli
