// --trials in the text report and the table.
#include <algorithm>
#include <sstream>

#include "tools/replay/report_format.h"

namespace clpool::replay_cli {

using replay::capacity_trial;
using replay::config_result;
using replay::format_bytes;
using replay::format_bytes_exact;
using replay::to_string;

// --trials: how many ran out, where the results change, and one line per trial.
std::string format_trials_text(const config_result& result) {
  std::ostringstream out;
  const std::vector<capacity_trial>& trials = result.trials;
  std::size_t clean = 0, changes = 0, refused = 0;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    clean += trials[i].oom ? 0 : 1;
    refused += trials[i].oom && trials[i].oom->refused_for_size();
    if (i > 0 && !trials[i].oom != !trials[i - 1].oom) ++changes;
  }
  if (trials.size() == 1) {
    out << "trials: 1 capacity, " << format_bytes_exact(trials.front().capacity);
  } else {
    out << "trials: " << trials.size() << " capacities from "
        << format_bytes_exact(trials.front().capacity) << " to "
        << format_bytes_exact(trials.back().capacity);
  }
  if (trials.size() > 1)
    out << " in steps of " << format_bytes_exact(trials[1].capacity - trials[0].capacity);
  out << ": " << clean << " clean, " << trials.size() - clean - refused << " out of memory";
  if (refused != 0)
    out << ", " << refused << (refused == 1 ? " refused for its size" : " refused for their size");
  out << "\n";
  if (changes == 1 && trials.front().oom) {
    const auto first_clean =
        std::find_if(trials.begin(), trials.end(), [](const capacity_trial& t) { return !t.oom; });
    out << "  clean from " << format_bytes_exact(first_clean->capacity)
        << " up, out of memory below\n";
  } else if (changes > 1 || (changes == 1 && !trials.front().oom)) {
    out << "  the result changes " << changes
        << " times across the range: more capacity does not always help here\n";
  }
  for (const capacity_trial& t : trials) {
    out << "  " << format_bytes_exact(t.capacity) << " (" << t.capacity << " bytes";
    if (const auto& s = t.device_start) {
      if (s->free_queried) out << "; the device said " << *s->free_queried << " free";
      out << "; a fill took " << s->fill_accepted;
    }
    out << "): ";
    if (!t.oom) {
      out << "clean\n";
    } else {
      out << (t.oom->refused_for_size() ? "refused for its size" : "out of memory") << " at event "
          << t.oom->event_index << " (" << format_bytes(t.oom->requested_bytes) << " requested, "
          << to_string(t.oom->site) << ")\n";
    }
  }
  return out.str();
}

std::string trials_clean_text(const config_result& result) {
  const auto clean = std::count_if(result.trials.begin(), result.trials.end(),
                                   [](const capacity_trial& t) { return !t.oom; });
  return std::to_string(clean) + " of " + std::to_string(result.trials.size());
}

}  // namespace clpool::replay_cli
