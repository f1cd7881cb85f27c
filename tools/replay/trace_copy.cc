#include "tools/replay/trace_copy.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace clpool::replay_cli {

namespace {

// The version the copy is written in (trace_copy_options::version).
unsigned copy_version(const trace_copy_options& o) {
  if (o.version >= trace::release_format_version)
    return std::min(o.version, trace::latest_format_version);
  return o.sites ? trace::sites_format_version : trace::format_version;
}

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
  // A recorder's `# failure:` comment after an event is read while the next event is, so written
  // as it is read it follows its own event in the copy as in the input. Cut to one line and to
  // what a binary metadata record holds; the status stays at the front.
  trace::comment_watch<Source> keep_failures(source, [&writer, &first](std::string_view key,
                                                                       std::string_view value) {
    if (key != "failure" || first) return;
    writer.comment(key, value.substr(0, std::min(value.find_first_of("\r\n"), std::size_t{1024})));
  });
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
