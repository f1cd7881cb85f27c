// trace_summary: reads a clpool trace with the strict reader and prints what it holds, one
// `key: value` per line, so scripts and tests can check a recorded trace:
//
//   events: 12
//   alloc: 5            (likewise alloc_failed, free, free_held, stop_holding)
//   alloc.buffer: 3     (allocations by kind: buffer, svm, host, sub)
//   peak_device_bytes: 3145728   (largest sum of live buffer + svm sizes)
//   live_at_end: 0      (blocks never freed)
//   first_alloc_failed: seq 9 size 1048576 kind buffer
//   meta.budget: 4294967296     (the trace's "# key: value" comments, except "failure")
//
// Exit status: 0 for a valid trace, 1 for a malformed one (the reader's error on stderr), 2 for
// bad usage.
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>

#include "tools/trace/trace_reader.h"

namespace {

using namespace clpool::trace;

int summarise(const std::string& path) {
  read_result read = read_all(path);
  std::map<std::string, std::uint64_t> counts;
  std::unordered_map<std::uint64_t, trace_event> live;
  std::uint64_t device_bytes = 0, peak = 0;
  const trace_event* first_failure = nullptr;
  for (const trace_event& e : read.events) {
    ++counts[std::string(to_string(e.action))];
    const bool device = e.kind == trace_kind::buffer || e.kind == trace_kind::svm;
    if (e.action == trace_action::alloc) {
      ++counts["alloc." + std::string(to_string(e.kind))];
      live[e.id] = e;
      if (device) device_bytes += e.size;
      if (device_bytes > peak) peak = device_bytes;
    } else if (e.action == trace_action::free) {
      auto it = live.find(e.id);
      if (it != live.end()) {
        const trace_kind k = it->second.kind;
        if (k == trace_kind::buffer || k == trace_kind::svm) device_bytes -= it->second.size;
        live.erase(it);
      }
    } else if (e.action == trace_action::alloc_failed && first_failure == nullptr) {
      first_failure = &e;
    }
  }
  std::printf("events: %zu\n", read.events.size());
  for (const char* action : {"alloc", "alloc_failed", "free", "free_held", "stop_holding"}) {
    std::printf("%s: %llu\n", action, static_cast<unsigned long long>(counts[action]));
  }
  for (const char* kind : {"buffer", "svm", "host", "sub"}) {
    std::printf("alloc.%s: %llu\n", kind,
                static_cast<unsigned long long>(counts[std::string("alloc.") + kind]));
  }
  std::printf("peak_device_bytes: %llu\n", static_cast<unsigned long long>(peak));
  std::printf("live_at_end: %zu\n", live.size());
  if (first_failure != nullptr) {
    std::printf("first_alloc_failed: seq %llu size %llu kind %s\n",
                static_cast<unsigned long long>(first_failure->seq),
                static_cast<unsigned long long>(first_failure->size),
                std::string(to_string(first_failure->kind)).c_str());
  }
  for (const auto& [key, value] : read.metadata) {
    // One "failure" comment follows every alloc_failed; first_alloc_failed stands for them.
    if (key != "failure") std::printf("meta.%s: %s\n", key.c_str(), value.c_str());
  }
  if (read.error) {
    std::fprintf(stderr, "trace_summary: %s\n", read.error->what());
    return 1;
  }
  return 0;
}

}  // namespace

constexpr const char* usage =
    "usage: trace_summary TRACE\n"
    "Reads a clpool trace strictly and prints one 'key: value' per line: events, counts per action\n"
    "and kind, peak_device_bytes, live_at_end, first_alloc_failed and the trace's comments.\n"
    "Exit status: 0 valid trace, 1 malformed trace, 2 bad usage.\n";

int main(int argc, char** argv) {
  const std::string arg = argc == 2 ? argv[1] : "";
  if (arg == "--help" || arg == "-h") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc != 2 || arg.empty() || (arg.size() > 1 && arg[0] == '-')) {
    if (argc == 2 && !arg.empty()) std::fprintf(stderr, "trace_summary: unknown option '%s'\n", argv[1]);
    std::fputs(usage, stderr);
    return 2;
  }
  return summarise(arg);
}
