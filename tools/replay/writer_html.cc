// --format html (--html FILE): a page to explore the first configuration's replay in a browser
// (html_data.h).
#include "tools/replay/html_data.h"
#include "tools/replay/output_writer.h"

namespace clpool::replay_cli {

using replay::config_result;
using replay::format_bytes_exact;
using replay::min_capacity_result;
using replay::replay_report;
using replay::to_json;
using replay::to_string;

namespace {

class html_writer final : public output_writer {
 public:
  std::string_view name() const override { return "html"; }
  std::string_view description() const override {
    return "a self-contained HTML page (works from file://) to explore the first configuration: "
           "live blocks over time or by allocation site, device used, capacity, pool held "
           "memory, the out-of-memory, each block's stack (--html FILE)";
  }
  bool needs_timeline() const override { return true; }
  bool reads_trace_again() const override { return true; }

  std::optional<std::string> render(const run_output& run, std::string& note) const override {
    const config_result& first = run.results.at(0);
    const replay_report* r = first.replay ? &*first.replay : nullptr;
    if (r == nullptr && first.min_capacity) {
      const min_capacity_result& m = *first.min_capacity;
      r = m.one_granule_below ? &*m.one_granule_below : (m.at_result ? &*m.at_result : nullptr);
    }
    if (r == nullptr) {
      note = "nothing written: no replay of " + to_string(first.config) + " to show";
      return std::nullopt;
    }
    if (run.trace_path.empty() || run.trace_path == "-") {
      note =
          "nothing written: the page reads the trace again, so it needs a clpool trace file "
          "(convert an RMM CSV with --write-trace first)";
      return std::nullopt;
    }
    note = to_string(first.config) + " on " + format_bytes_exact(r->device.capacity);
    nlohmann::json data = html_data(*r, run.trace_path, "clpool_replay: " + run.input);
    data["search_note"] = search_replay_note(first);
    return html_page(to_json(run.results, run.input, run.exit_code), to_json(*r), data);
  }
};

const writer_registration registered(std::make_unique<html_writer>());

}  // namespace
}  // namespace clpool::replay_cli
