#include "tools/replay/output_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "replay/config.h"

namespace clpool::replay_cli {

using replay::config_error;

namespace {

// Built on first use, so that registrations from other files' static initialisers are safe
// whatever their order.
std::map<std::string, std::unique_ptr<output_writer>, std::less<>>& registry() {
  static auto* writers = new std::map<std::string, std::unique_ptr<output_writer>, std::less<>>();
  return *writers;
}

std::string known_formats() {
  std::string s;
  for (const output_writer* w : all_writers())
    s += (s.empty() ? "" : ", ") + std::string(w->name());
  return s;
}

}  // namespace

void register_writer(std::unique_ptr<output_writer> writer) {
  const std::string name(writer->name());
  if (!registry().emplace(name, std::move(writer)).second) {
    std::fprintf(stderr, "clpool_replay: two output writers are called '%s'\n", name.c_str());
    std::abort();
  }
}

const output_writer* find_writer(std::string_view name) {
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second.get();
}

std::vector<const output_writer*> all_writers() {
  std::vector<const output_writer*> out;
  for (const auto& [name, w] : registry()) out.push_back(w.get());
  return out;
}

std::vector<output_request> parse_output_requests(const std::vector<format_arg>& formats) {
  std::vector<output_request> out;
  const auto add = [&](std::string_view name, std::string path, std::string label) {
    const output_writer* w = find_writer(name);
    if (w == nullptr) {
      throw config_error(label + ": unknown format '" + std::string(name) +
                         "' (known: " + known_formats() + ")");
    }
    if (path == "-") path.clear();
    out.push_back({w, std::move(path), std::move(label)});
  };
  for (const format_arg& f : formats) {
    const std::size_t eq = f.spec.find('=');
    const std::string name = f.spec.substr(0, eq);
    if (eq != std::string::npos && eq + 1 == f.spec.size()) {
      throw config_error("--format: '" + f.spec +
                         "' names no file (NAME=FILE, or NAME alone for "
                         "standard output)");
    }
    add(name, eq == std::string::npos ? "" : f.spec.substr(eq + 1),
        f.label.empty() ? "--format " + name : f.label);
  }
  const auto to_stdout =
      std::count_if(out.begin(), out.end(), [](const output_request& r) { return r.path.empty(); });
  if (to_stdout > 1) {
    std::string which;
    for (const output_request& r : out) {
      if (r.path.empty()) which += (which.empty() ? "" : " and ") + r.label;
    }
    throw config_error(which +
                       " would all write to standard output; give all but one a file "
                       "(--format NAME=FILE)");
  }
  if (to_stdout == 0) add("text", "", "the report");
  return out;
}

}  // namespace clpool::replay_cli
