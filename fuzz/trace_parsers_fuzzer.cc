// Fuzzer 4b: the readers of trace files, outside input by definition: the clpool trace reader
// (//trace:trace_format, text and binary forms, FORMAT.md) and the RMM logging CSV import
// (//trace:rmm_import).
//
// The LAST byte picks the reader (and, for the trace reader, whether it checks liveness); the
// rest is the file. Each reader must either deliver events or throw trace_error: any other
// exception, crash or sanitizer report is a bug. Then, against a model of the format's rules:
//   - every delivered event obeys FORMAT.md: seq strictly increasing, size <= max_event_size,
//     and with liveness checks on, an alloc names an id that is not live and a free one that is
//     (the model keeps its own set of live ids);
//   - an error is sticky: next() after a trace_error throws again;
//   - every stack id an event names is defined in the reader's site table (version 2);
//   - round trip: the events delivered (up to the error, if any) and the frames and stacks read,
//     written back with trace_writer in text and in binary, read back to exactly the same events,
//     frames and stack chains with no error;
//   - every output writer of clpool_replay (text, its --compare table, JSON, SVG, HTML) runs on
//     every clpool trace the reader accepts whole (up to 2,000 events), replayed on a device of
//     half its allocated bytes so that most run out of memory and name their sites: no writer
//     throws, the text has no control character, the JSON parses, the SVG is well-formed XML,
//     the page's data parses and cannot end its <script> (fuzz/output_checks.h), and every
//     string in them is printable UTF-8, whatever bytes the trace's frame names hold.
// A mismatch prints the reader, the input (escaped, first 512 bytes) and what differed, then
// aborts.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <unistd.h>

#include "fuzz/output_checks.h"
#include "replay/replay.h"
#include "tools/replay/output_writer.h"
#include "trace/rmm_import.h"
#include "trace/trace_event.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace {

using clpool::trace::reader_options;
using clpool::trace::rmm_csv_reader;
using clpool::trace::trace_action;
using clpool::trace::trace_encoding;
using clpool::trace::trace_error;
using clpool::trace::trace_event;
using clpool::trace::trace_reader;
using clpool::trace::trace_writer;

const char* g_reader = "";
std::string_view g_input;

std::string escaped(std::string_view s, std::size_t limit = 512) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > limit) out += "...";
  return out;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr,
               "\n==== trace_parsers_fuzzer: %s broke its contract ====\n"
               "input (%zu bytes): \"%s\"\n%s\n",
               g_reader, g_input.size(), escaped(g_input).c_str(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

void expect(bool condition, const std::string& what) {
  if (!condition) fail(what);
}

std::string describe(const trace_event& e) {
  return "seq " + std::to_string(e.seq) + " " + std::string(clpool::trace::to_string(e.action)) +
         " id " + std::to_string(e.id) + " size " + std::to_string(e.size);
}

// FORMAT.md's rules, from the model's own bookkeeping.
struct format_model {
  bool check_liveness = true;
  bool have_seq = false;
  std::uint64_t last_seq = 0;
  std::unordered_set<std::uint64_t> live;
  std::unordered_set<std::uint64_t> released;  // live blocks the program released (version 3)

  void accept(const trace_event& e) {
    expect(!have_seq || e.seq > last_seq, "seq does not increase: " + describe(e));
    have_seq = true;
    last_seq = e.seq;
    expect(e.size <= clpool::trace::max_event_size, "size above max_event_size: " + describe(e));
    if (!check_liveness) return;
    if (e.action == trace_action::alloc) {
      expect(live.insert(e.id).second, "alloc of a live id delivered: " + describe(e));
    } else if (e.action == trace_action::free) {
      expect(live.erase(e.id) == 1, "free of an id that is not live delivered: " + describe(e));
      released.erase(e.id);
    } else if (e.action == trace_action::release) {
      expect(live.count(e.id) == 1, "release of an id that is not live delivered: " + describe(e));
      expect(released.insert(e.id).second, "second release of a block delivered: " + describe(e));
    } else if (e.action == trace_action::use) {
      expect(live.count(e.id) == 1, "use of an id that is not live delivered: " + describe(e));
    }
  }
};

// Reads everything `reader` delivers; true if it ended cleanly, false on trace_error.
template <class Reader>
bool drain(Reader& reader, std::vector<trace_event>& events, format_model& model) {
  trace_event e;
  try {
    while (reader.next(e)) {
      model.accept(e);
      events.push_back(e);
      if (events.size() > 100000) return true;  // bounded work per input
    }
    return true;
  } catch (const trace_error& error) {
    expect(error.events_read() == events.size(),
           "trace_error says " + std::to_string(error.events_read()) + " events were read, " +
               std::to_string(events.size()) + " were delivered");
  }
  try {  // sticky
    reader.next(e);
    fail("next() after a trace_error did not throw again");
  } catch (const trace_error&) {
  }
  return false;
}

void round_trip(const std::vector<trace_event>& events, bool check_liveness,
                const clpool::trace::site_table& sites = {}, unsigned version = 1) {
  for (const trace_encoding encoding : {trace_encoding::text, trace_encoding::binary}) {
    const std::string form = encoding == trace_encoding::text ? "text" : "binary";
    std::ostringstream out;
    {
      trace_writer writer(out, encoding, version);
      if (version >= clpool::trace::sites_format_version) {
        for (const auto& [id, frame] : sites.all_frames()) writer.write_frame(id, *frame);
        for (const auto& [id, entry] : sites.stacks_in_order()) {
          writer.write_stack(id, entry.parent, entry.frame);
        }
      }
      for (const trace_event& e : events) writer.write(e);
      writer.flush();
    }
    std::vector<trace_event> again;
    try {
      trace_reader reader =
          trace_reader::from_string(out.str(), "<round trip>", reader_options{check_liveness});
      expect(reader.encoding() == encoding, form + " trace written back is read as the other form");
      trace_event e;
      while (reader.next(e)) again.push_back(e);
      const clpool::trace::site_table& back = reader.sites();
      expect(back.frame_count() == sites.frame_count() && back.stack_count() == sites.stack_count(),
             form + " round trip changed the number of frames or stacks");
      for (const auto& [id, frame] : sites.all_frames()) {
        const clpool::trace::frame_info* f = back.find_frame(id);
        expect(f != nullptr && *f == *frame,
               form + " round trip changed frame " + std::to_string(id));
      }
      for (const auto& [id, entry] : sites.stacks_in_order()) {
        expect(back.frames_of(id) == sites.frames_of(id),
               form + " round trip changed stack " + std::to_string(id));
      }
    } catch (const trace_error& error) {
      fail("the " + form + " trace written back does not read: line " +
           std::to_string(error.line()) + ": " + error.problem());
    }
    expect(again.size() == events.size(), form + " round trip: " + std::to_string(events.size()) +
                                              " events written, " + std::to_string(again.size()) +
                                              " read back");
    for (std::size_t i = 0; i < events.size(); ++i) {
      expect(again[i] == events[i], form + " round trip changed event " + std::to_string(i) + ": " +
                                        describe(events[i]) + " -> " + describe(again[i]));
    }
  }
}

// The file the HTML writer reads the trace from again (one per process, rewritten per input).
const std::string& trace_file(const std::string& text) {
  static const std::string path = [] {
    std::string templ = "/tmp/trace_parsers_fuzzer.XXXXXX";
    const int fd = ::mkstemp(templ.data());
    if (fd >= 0) ::close(fd);
    return templ;
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f != nullptr) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return path;
}

void run_writers(const std::string& text, unsigned version,
                 const std::vector<trace_event>& events) {
  namespace replay = clpool::replay;
  namespace replay_cli = clpool::replay_cli;
  std::uint64_t allocated = 0;
  for (const trace_event& e : events) {
    if (e.action == trace_action::alloc)
      allocated += std::min<std::uint64_t>(e.size, std::uint64_t{1} << 40);
  }
  replay::device_spec device;
  device.capacity = std::max<std::uint64_t>(4096, allocated / 2);
  device.semantics = clpool::device_model::alloc_semantics::deferred;
  std::vector<replay::replay_config> configs(1);
  if (text.size() % 3 == 0) configs.emplace_back().use_pool = false;  // --compare: the table
  replay_cli::run_output run;
  run.input = "<fuzz>";
  run.trace_path = trace_file(text);
  run.full_stacks = text.size() % 2 == 0;
  replay::replay_options options;
  options.timeline = true;
  options.sites = version >= clpool::trace::sites_format_version;
  for (const replay::replay_config& c : configs) {
    try {
      trace_reader reader = trace_reader::from_string(text, "<fuzz>", reader_options{false});
      run.results.push_back({c, replay::replay_stream(reader, c, device, options), std::nullopt});
    } catch (const trace_error&) {
      return;  // the engine refused what the reader let through: no outputs to check
    }
  }
  for (const replay_cli::output_writer* w : replay_cli::all_writers()) {
    const std::string name(w->name());
    std::string note;
    std::optional<std::string> out;
    try {
      out = w->render(run, note);
    } catch (const std::exception& e) {
      fail("the " + name + " writer threw on an accepted trace: " + e.what());
    }
    if (!out) continue;
    std::string why;
    if (name == "text")
      why = clpool::fuzz::check_text(*out);
    else if (name == "json")
      why = clpool::fuzz::check_json(*out);
    else if (name == "svg")
      why = clpool::fuzz::check_xml(*out);
    else if (name == "html")
      why = clpool::fuzz::check_html(*out);
    else
      why = clpool::fuzz::check_text(*out);
    expect(why.empty(), "the " + name + " output: " + why);
  }
}

void fuzz_trace_reader(const std::string& text, bool check_liveness) {
  std::vector<trace_event> events;
  format_model model;
  model.check_liveness = check_liveness;
  clpool::trace::site_table sites;
  unsigned version = 1;
  bool whole = false;
  try {
    trace_reader reader = trace_reader::from_string(text, "<fuzz>", reader_options{check_liveness});
    whole = drain(reader, events, model);
    sites = reader.sites();
    version = reader.version();
  } catch (const trace_error&) {
    expect(events.empty(), "the header was refused after events were delivered");
    return;  // the header was refused
  }
  for (const trace_event& e : events) {
    expect(sites.has_stack(e.stack), "event names an undefined stack: " + describe(e));
    expect(version >= clpool::trace::sites_format_version || e.stack == 0,
           "a version-1 trace delivered a stack id: " + describe(e));
    expect(version >= clpool::trace::release_format_version ||
               (e.action != trace_action::release && e.action != trace_action::wait),
           "a trace of version " + std::to_string(version) +
               " delivered a release or wait: " + describe(e));
    expect(version >= clpool::trace::first_use_format_version || e.action != trace_action::use,
           "a trace of version " + std::to_string(version) + " delivered a use: " + describe(e));
  }
  round_trip(events, check_liveness, sites, version);
  if (whole && check_liveness && events.size() <= 2000) run_writers(text, version, events);
}

void fuzz_rmm(const std::string& text) {
  std::vector<trace_event> events;
  format_model model;
  try {
    rmm_csv_reader reader = rmm_csv_reader::from_string(text, "<fuzz>");
    drain(reader, events, model);
  } catch (const trace_error&) {
    expect(events.empty(), "the header was refused after events were delivered");
    return;
  }
  round_trip(events, /*check_liveness=*/true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const unsigned which = in.ConsumeIntegralInRange<unsigned>(0, 2);
  const std::string text = in.ConsumeRemainingBytesAsString();
  g_input = text;
  switch (which) {
    case 0:
      g_reader = "trace_reader";
      fuzz_trace_reader(text, /*check_liveness=*/true);
      break;
    case 1:
      g_reader = "trace_reader (check_liveness=false)";
      fuzz_trace_reader(text, /*check_liveness=*/false);
      break;
    default:
      g_reader = "rmm_csv_reader";
      fuzz_rmm(text);
      break;
  }
  return 0;
}
