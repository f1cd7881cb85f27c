// clpool._core.replay_json: the replay engine (replay/) in-process, for clpool.replay
// (clpool/replay.py). Replays a clpool trace on the simulated device, per configuration at a
// capacity and/or with the minimum-capacity search, exactly as clpool_replay --device sim does,
// and returns the result model as clpool_replay --json writes it (replay/result_json.h).
#include "python/replay_binding.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/input_file.h"
#include "common/text_escape.h"
#include "device_model/profile.h"
#include "replay/config.h"
#include "replay/device.h"
#include "replay/min_capacity.h"
#include "replay/replay.h"
#include "replay/result_json.h"
#include "trace/trace_reader.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using namespace clpool::replay;

struct replay_request {
  std::string trace_path;
  std::vector<std::string> configs;
  std::optional<std::string> capacity;
  bool min_capacity = false;
  std::string granule = "1MiB";
  std::string profile = "nvidia";
  std::optional<std::string> semantics;
  std::optional<std::string> host_capacity;
  std::optional<std::string> frees_at;  // FORMAT.md "Two moments of a free"; nothing: the profile's
};

// Thrown by `interrupted_by_signal` out of a replay when Python has a signal to handle (Ctrl-C):
// the Python error (KeyboardInterrupt) is already set.
struct interrupted : std::exception {};

// The replay's progress function: with the GIL for a moment, Python's signal handlers run
// (PyErr_CheckSignals); one that raised (SIGINT's: KeyboardInterrupt) stops the replay.
void interrupted_by_signal(std::uint64_t, std::uint64_t) {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw interrupted{};
}

// The trace and a profile file are named as the tools name them: what clpool_replay refuses
// before opening (common/input_file.h: a NUL in the path, a directory, a FIFO, a socket) is a
// ValueError here too.
void check_path(const std::string& what, const std::string& path) {
  if (const std::string why = common::reread_input_refusal(path); !why.empty()) {
    throw config_error(what + ": '" + common::escape_text(path) + "' " + why);
  }
}

// Everything checked before the first replay, as clpool_replay's plan is.
std::string run(const replay_request& q) {
  check_path("trace", q.trace_path);
  if (q.profile.find('\0') != std::string::npos) check_path("profile", q.profile);
  std::vector<replay_config> configs;
  for (const std::string& c : q.configs) configs.push_back(parse_config(c));
  if (configs.empty()) throw config_error("no configuration to replay");
  std::optional<std::uint64_t> capacity;
  if (q.capacity) capacity = common::size_option(*q.capacity, "capacity", {.device = true, .positive = true});
  if (!capacity && !q.min_capacity) {
    throw config_error("capacity is required (or min_capacity=True to find one)");
  }
  const std::uint64_t granule = common::size_option(q.granule, "granule", {.positive = true});
  check_granule(granule, "granule");
  device_spec device;
  device.profile = device_model::load_profile(q.profile);
  if (q.semantics) {
    const std::optional<alloc_semantics> s = parse_semantics(*q.semantics);
    if (!s) throw config_error("semantics: '" + *q.semantics + "' is not immediate, deferred or host_oom");
    device.semantics = *s;
  } else {
    device.semantics = semantics_of(device.profile);
  }
  if (q.host_capacity) device.host_capacity = common::size_option(*q.host_capacity, "host_capacity");
  if (capacity) {
    if (std::string why = device_model::capacity_refusal(device.profile, *capacity, "capacity"); !why.empty()) {
      throw config_error(why);
    }
  }
  replay_options options;
  if (q.frees_at) {
    options.frees_at = parse_free_moment(*q.frees_at);
    if (!options.frees_at) throw config_error("frees_at: '" + *q.frees_at + "' is not release, wait or driver");
  }
  options.sites = trace::trace_reader(q.trace_path, {.check_liveness = false}).version() >=
                  trace::sites_format_version;
  options.progress_interval = std::uint64_t{1} << 14;  // Ctrl-C within milliseconds
  simulated_backend backend(device);
  const auto replay_at = [&](const replay_config& c, std::uint64_t cap) {
    interrupted_by_signal(0, 0);
    trace::trace_reader reader(q.trace_path, {.check_liveness = false});
    return replay_stream(reader, c, backend.open(cap), options, interrupted_by_signal);
  };
  std::vector<config_result> results;
  bool any_oom = false;
  for (const replay_config& c : configs) {
    config_result res;
    res.config = c;
    if (capacity) {
      res.replay = replay_at(c, *capacity);
      any_oom |= !res.replay->ok();
    }
    if (q.min_capacity) {
      res.min_capacity = find_min_capacity([&](std::uint64_t cap) { return replay_at(c, cap); }, granule);
      any_oom |= !res.min_capacity->found;
    }
    results.push_back(std::move(res));
  }
  return to_json(results, q.trace_path, any_oom ? 1 : 0).dump();
}

}  // namespace

void bind_replay(py::module_& m) {
  m.def(
      "replay_json",
      [](std::string trace_path, std::vector<std::string> configs, std::optional<std::string> capacity,
         bool min_capacity, std::string granule, std::string profile,
         std::optional<std::string> semantics, std::optional<std::string> host_capacity,
         std::optional<std::string> frees_at) {
        const replay_request q{std::move(trace_path), std::move(configs), std::move(capacity),
                               min_capacity,          std::move(granule), std::move(profile),
                               std::move(semantics),  std::move(host_capacity), std::move(frees_at)};
        std::string out;
        std::optional<std::string> error;
        bool stopped = false;
        {
          py::gil_scoped_release nogil;  // the replay touches no Python object
          try {
            out = run(q);
          } catch (const interrupted&) {
            stopped = true;
          } catch (const std::exception& e) {
            error = e.what();
          }
        }
        // A signal's exception (KeyboardInterrupt) as Python raised it, also when the signal cut
        // a read short (EINTR) before a check saw it.
        if (stopped || (error && PyErr_CheckSignals() != 0)) throw py::error_already_set();
        if (error) throw py::value_error(*error);
        return out;
      },
      py::arg("trace_path"), py::arg("configs"), py::arg("capacity"), py::arg("min_capacity"),
      py::arg("granule"), py::arg("profile"), py::arg("semantics"), py::arg("host_capacity"),
      py::arg("frees_at"),
      "Replays a clpool trace on the simulated device; returns clpool_replay --json's document "
      "(a str). ValueError for a bad value or an unreadable trace; KeyboardInterrupt on Ctrl-C "
      "(Python's signal handlers run every 16384 events). See clpool.replay.");
}

}  // namespace clpool::python
