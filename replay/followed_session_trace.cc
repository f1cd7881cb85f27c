// followed_session::write_window_trace: a window written as a trace of its own, the pytest
// plugin's artifact that clpool_replay reads (own.trace, device.trace).
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/output_file.h"
#include "common/text_escape.h"
#include "replay/followed_session.h"
#include "trace/trace_writer.h"

namespace clpool::replay {

using trace::trace_action;
using trace::trace_event;

namespace {

// The stacks `used` need (each with its callers) and their frames, written parents first.
void write_sites(trace::trace_writer& out, const trace::site_table* table,
                 const std::set<std::uint64_t>& used) {
  if (table == nullptr || used.empty()) return;
  std::unordered_map<std::uint64_t, trace::site_table::stack_entry> parent_of;
  for (const auto& [id, st] : table->stacks_in_order()) parent_of.emplace(id, st);
  std::set<std::uint64_t> stacks, frames;
  for (std::uint64_t s : used) {
    while (s != 0 && stacks.insert(s).second) {
      const auto it = parent_of.find(s);
      if (it == parent_of.end()) break;
      frames.insert(it->second.frame);
      s = it->second.parent;
    }
  }
  for (const std::uint64_t f : frames) {
    if (const trace::frame_info* info = table->find_frame(f)) out.write_frame(f, *info);
  }
  for (const auto& [id, st] : table->stacks_in_order()) {
    if (stacks.count(id) != 0) out.write_stack(id, st.parent, st.frame);
  }
}

}  // namespace

void followed_session::write_window_trace(const std::string& path, const std::string& test,
                                          window_trace what,
                                          const std::set<std::uint64_t>& other_threads) const {
  std::vector<trace_event> events;
  std::vector<std::pair<std::size_t, std::string>> failures;  // after events[i - 1]
  if (what == window_trace::own) {
    events = own_events(0, until(), other_threads);
  } else {
    // The blocks the trace allocates. A release or free of any other is left out: a block refused
    // at its first use before the window held nothing, so the trace does not start with it.
    std::set<std::uint64_t> held;
    for (const block& b : before_window()) {
      trace_event e;
      e.seq = b.seq;
      e.thread = b.thread;
      e.action = trace_action::alloc;
      e.id = b.id;
      e.size = b.size;
      e.kind = b.kind;
      e.stack = b.stack;
      events.push_back(e);
      held.insert(b.id);
    }
    for (const entry& w : std::span(window_).first(settled())) {
      if (w.failure) {
        failures.emplace_back(events.size(), w.text);
        continue;
      }
      const trace_event& e = w.event;
      const bool frees = e.action == trace_action::free || e.action == trace_action::release;
      if (frees && held.count(e.id) == 0) continue;
      if (e.action == trace_action::alloc) held.insert(e.id);
      if (e.action == trace_action::free) held.erase(e.id);
      events.push_back(e);
      if (!w.text.empty()) failures.emplace_back(events.size(), w.text);
    }
  }
  std::set<std::uint64_t> used;
  for (const trace_event& e : events) {
    if (e.stack != 0) used.insert(e.stack);
  }
  common::atomic_output_file file(path, "artifact", {.refuse_links = true, .regular_only = true});
  {
    trace::trace_writer out(file.stream(), trace::trace_encoding::text,
                            trace::release_format_version);
    out.comment("source", "clpool pytest plugin");
    out.comment("test", common::escape_text(test));
    out.comment("events", what == window_trace::own
                              ? "the test's own (what its figures count)"
                              : "the device's: what was live before the test, every thread's");
    write_sites(out, sites(), used);
    std::size_t next_failure = 0;
    for (std::size_t i = 0; i <= events.size(); ++i) {
      while (next_failure < failures.size() && failures[next_failure].first == i) {
        out.comment("failure", common::escape_text(failures[next_failure++].second));
      }
      if (i < events.size()) out.write(events[i]);
    }
    out.flush();
  }
  file.commit();
}

}  // namespace clpool::replay
