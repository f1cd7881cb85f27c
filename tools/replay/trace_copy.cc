#include "tools/replay/trace_copy.h"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <utility>

namespace clpool::replay_cli {

namespace {

// The version the copy is written in (trace_copy_options::version).
unsigned copy_version(const trace_copy_options& o) {
  if (o.version >= trace::release_format_version)
    return std::min(o.version, trace::latest_format_version);
  return o.sites ? trace::sites_format_version : trace::format_version;
}

// Writes the `# failure:` comments `source` reads after its first event into `writer` as they are
// read, while this lives: read while the next event is, each follows its own event in the copy
// as in the input. A source without comments (the RMM importer) has none.
template <class Source>
class keep_failure_comments {
 public:
  keep_failure_comments(Source& source, trace::trace_writer& writer, const bool& first)
      : source_(source) {
    if constexpr (requires { source.exchange_on_comment(nullptr); }) {
      previous_ = source.exchange_on_comment(
          [this, &writer, &first](std::string_view key, std::string_view value) {
            if (previous_) previous_(key, value);
            if (key != "failure" || first) return;
            // One line, and what a binary metadata record holds: the status stays at the front.
            writer.comment(
                key, value.substr(0, std::min(value.find_first_of("\r\n"), std::size_t{1024})));
          });
    }
  }
  ~keep_failure_comments() {
    if constexpr (requires { source_.exchange_on_comment(nullptr); })
      source_.exchange_on_comment(std::move(previous_));
  }
  keep_failure_comments(const keep_failure_comments&) = delete;
  keep_failure_comments& operator=(const keep_failure_comments&) = delete;

 private:
  Source& source_;
  trace::trace_reader::comment_fn previous_;
};

template <class Source>
void copy(Source& source, const trace_copy_options& o) {
  const unsigned version = copy_version(o);
  // A trace with sites stays one: its stacks are written as they appear, before the events that
  // name them, and its frames at the end (FORMAT.md allows frames after their use).
  const bool with_sites = o.sites && version >= trace::sites_format_version;
  trace::trace_writer writer(o.path, o.encoding, "--write-trace", version);
  writer.comment("source", o.source);
  trace::trace_event e;
  std::size_t stacks_written = 0;
  bool first = true;
  keep_failure_comments<Source> keep(source, writer, first);
  // Header comments are read with the first event (or at the end): first_uses goes before it.
  const auto header_comments = [&] {
    if constexpr (requires { source.metadata(); }) {
      for (const auto& [key, value] : source.metadata()) {
        if (first && version >= trace::first_use_format_version && key == "first_uses")
          writer.comment("first_uses", value);
      }
    }
    first = false;
  };
  while (source.next(e)) {
    header_comments();
    if constexpr (requires { source.sites(); }) {
      const auto& stacks = source.sites().stacks_in_order();
      for (; with_sites && stacks_written < stacks.size(); ++stacks_written) {
        writer.write_stack(stacks[stacks_written].first, stacks[stacks_written].second.parent,
                           stacks[stacks_written].second.frame);
      }
    }
    writer.write(e);
  }
  header_comments();
  if constexpr (requires { source.sites(); }) {
    if (with_sites) {
      for (const auto& [id, frame] : source.sites().all_frames()) writer.write_frame(id, *frame);
    }
  }
  writer.commit();
}

}  // namespace

void copy_trace(trace::trace_reader& source, const trace_copy_options& options) {
  copy(source, options);
}

void copy_trace(trace::rmm_csv_reader& source, const trace_copy_options& options) {
  copy(source, options);
}

}  // namespace clpool::replay_cli
