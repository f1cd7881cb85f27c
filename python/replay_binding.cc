// clpool._core.replay_json and diff_json: the replay engine (replay/) in-process, for clpool.replay
// and clpool.replay.diff (clpool/replay.py). replay_json replays a clpool trace on the simulated
// device, per configuration at a capacity and/or with the minimum-capacity search, exactly as
// clpool_replay --device sim does, and returns the result model as clpool_replay --json writes it
// (replay/result_json.h). diff_json replays two traces as clpool_replay --diff does (each
// configuration on an unbounded device and searched) and returns the engine's diff as
// clpool_replay --diff --format json writes it (replay/diff.h).
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
#include "replay/diff.h"
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
  std::optional<std::string> max_alloc;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE; nothing: not modelled
  std::optional<std::string> frees_at;  // FORMAT.md "Two moments of a free"; nothing: the profile's
};

// clpool.replay.diff's arguments: two traces and, as replay_request's, the configurations and the
// device; no capacity (each configuration is replayed unbounded and searched, as --diff does).
struct diff_request {
  std::string old_path, new_path;
  std::vector<std::string> configs;
  std::string granule = "1MiB";
  std::string profile = "nvidia";
  std::optional<std::string> semantics;
  std::optional<std::string> host_capacity;
  std::optional<std::string> max_alloc;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE; nothing: not modelled
  std::optional<std::string> frees_at;
  std::optional<std::string> max_growth;  // "5%": the gate (replay/diff.h parse_growth)
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

std::vector<replay_config> parse_configs(const std::vector<std::string>& texts) {
  std::vector<replay_config> configs;
  for (const std::string& c : texts) configs.push_back(parse_config(c));
  if (configs.empty()) throw config_error("no configuration to replay");
  return configs;
}

// The simulated device as the arguments describe it: the profile (by name or file), semantics
// (default: the profile's), host budget and maximum allocation.
device_spec device_of(const std::string& profile, const std::optional<std::string>& semantics,
                      const std::optional<std::string>& host_capacity,
                      const std::optional<std::string>& max_alloc) {
  device_spec device;
  device.profile = device_model::load_profile(profile);
  if (semantics) {
    const std::optional<alloc_semantics> s = parse_semantics(*semantics);
    if (!s)
      throw config_error("semantics: '" + *semantics + "' is not immediate, deferred or host_oom");
    device.semantics = *s;
  } else {
    device.semantics = semantics_of(device.profile);
  }
  if (host_capacity) device.host_capacity = common::size_option(*host_capacity, "host_capacity");
  if (max_alloc)
    device.max_alloc =
        common::size_option(*max_alloc, "max_alloc", {.device = true, .positive = true});
  return device;
}

std::uint64_t granule_of(const std::string& text) {
  const std::uint64_t granule = common::size_option(text, "granule", {.positive = true});
  check_granule(granule, "granule");
  return granule;
}

std::optional<free_moment> frees_at_of(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const std::optional<free_moment> m = parse_free_moment(*text);
  if (!m) throw config_error("frees_at: '" + *text + "' is not release, wait or driver");
  return m;
}

// Every configuration of `configs` replayed from `trace_path` on `device`: at `capacity` when
// given, and searched when `min_capacity`, as clpool_replay's replay_all does; `any_oom`: whether
// a replay ran out or a search found nothing.
std::vector<config_result> replay_configs(const std::string& trace_path,
                                          const std::vector<replay_config>& configs,
                                          const device_spec& device,
                                          std::optional<free_moment> frees_at,
                                          std::optional<std::uint64_t> capacity, bool min_capacity,
                                          std::uint64_t granule, bool& any_oom) {
  replay_options options;
  options.frees_at = frees_at;
  options.sites = trace::trace_reader(trace_path, {.check_liveness = false}).version() >=
                  trace::sites_format_version;
  options.progress_interval = std::uint64_t{1} << 14;  // Ctrl-C within milliseconds
  simulated_backend backend(device);
  const auto replay_at = [&](const replay_config& c, std::uint64_t cap) {
    interrupted_by_signal(0, 0);
    trace::trace_reader reader(trace_path, {.check_liveness = false});
    return replay_stream(reader, c, backend.open(cap), options, interrupted_by_signal);
  };
  std::vector<config_result> results;
  any_oom = false;
  for (const replay_config& c : configs) {
    config_result res;
    res.config = c;
    if (capacity) {
      res.replay = replay_at(c, *capacity);
      any_oom |= !res.replay->ok();
    }
    if (min_capacity) {
      res.min_capacity =
          find_min_capacity([&](std::uint64_t cap) { return replay_at(c, cap); }, granule);
      any_oom |= !res.min_capacity->found;
    }
    results.push_back(std::move(res));
  }
  return results;
}

// Everything checked before the first replay, as clpool_replay's plan is.
std::string run(const replay_request& q) {
  // "-" would be standard input to the reader, which the replay reads more than once (the
  // trace's version, then each configuration): refused, as the command line refuses it with more
  // than one pass.
  if (q.trace_path == "-") {
    throw config_error("trace: the trace is read more than once; give a file, not '-'");
  }
  check_path("trace", q.trace_path);
  if (q.profile.find('\0') != std::string::npos) check_path("profile", q.profile);
  const std::vector<replay_config> configs = parse_configs(q.configs);
  std::optional<std::uint64_t> capacity;
  if (q.capacity)
    capacity = common::size_option(*q.capacity, "capacity", {.device = true, .positive = true});
  if (!capacity && !q.min_capacity) {
    throw config_error("capacity is required (or min_capacity=True to find one)");
  }
  const std::uint64_t granule = granule_of(q.granule);
  const device_spec device = device_of(q.profile, q.semantics, q.host_capacity, q.max_alloc);
  if (capacity) {
    if (std::string why = device_model::capacity_refusal(device.profile, *capacity, "capacity");
        !why.empty()) {
      throw config_error(why);
    }
  }
  const std::optional<free_moment> frees_at = frees_at_of(q.frees_at);
  bool any_oom = false;
  const std::vector<config_result> results = replay_configs(
      q.trace_path, configs, device, frees_at, capacity, q.min_capacity, granule, any_oom);
  return to_json(results, q.trace_path, any_oom ? 1 : 0).dump();
}

// clpool_replay --diff's checks (tools/replay/diff_command.cc run_diff) that apply to two paths and
// no command line, then both traces replayed as its main.cc does for --diff: every configuration at
// the largest capacity the simulated device takes (its peak) and searched.
std::string run_diff(const diff_request& q) {
  // "-" would be standard input to the reader, which a diff cannot read the several times it must.
  const auto check_trace = [](const std::string& what, const std::string& path) {
    if (path == "-") {
      throw config_error(what + ": each trace is replayed several times; give a file, not '-'");
    }
    check_path(what, path);
  };
  check_trace("old", q.old_path);
  check_trace("new", q.new_path);
  const std::optional<double> max_growth =
      q.max_growth ? std::optional<double>(parse_growth(*q.max_growth, "max_growth"))
                   : std::nullopt;
  if (q.profile.find('\0') != std::string::npos) check_path("profile", q.profile);
  const std::vector<replay_config> configs = parse_configs(q.configs);
  const std::uint64_t granule = granule_of(q.granule);
  const device_spec device = device_of(q.profile, q.semantics, q.host_capacity, q.max_alloc);
  const std::optional<free_moment> frees_at = frees_at_of(q.frees_at);
  bool any_oom = false;
  const std::vector<config_result> old_run = replay_configs(
      q.old_path, configs, device, frees_at, common::max_device_bytes, true, granule, any_oom);
  const std::vector<config_result> new_run = replay_configs(
      q.new_path, configs, device, frees_at, common::max_device_bytes, true, granule, any_oom);
  interrupted_by_signal(0, 0);  // the sites' passes over both traces take no progress function
  return diff_json(diff_traces(q.old_path, old_run, q.new_path, new_run, {}, max_growth)).dump();
}

// Runs `work` (run or run_diff) with the GIL released (the engine touches no Python object) and
// returns its document; a C++ error becomes ValueError, Ctrl-C KeyboardInterrupt.
template <class Work>
std::string call_engine(const Work& work) {
  std::string out;
  std::optional<std::string> error;
  bool stopped = false;
  {
    py::gil_scoped_release nogil;
    try {
      out = work();
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
}

}  // namespace

void bind_replay(py::module_& m) {
  m.def(
      "replay_json",
      [](std::string trace_path, std::vector<std::string> configs,
         std::optional<std::string> capacity, bool min_capacity, std::string granule,
         std::string profile, std::optional<std::string> semantics,
         std::optional<std::string> host_capacity, std::optional<std::string> max_alloc,
         std::optional<std::string> frees_at) {
        const replay_request q{std::move(trace_path), std::move(configs),
                               std::move(capacity),   min_capacity,
                               std::move(granule),    std::move(profile),
                               std::move(semantics),  std::move(host_capacity),
                               std::move(max_alloc),  std::move(frees_at)};
        return call_engine([&q] { return run(q); });
      },
      py::arg("trace_path"), py::arg("configs"), py::arg("capacity"), py::arg("min_capacity"),
      py::arg("granule"), py::arg("profile"), py::arg("semantics"), py::arg("host_capacity"),
      py::arg("max_alloc"), py::arg("frees_at"),
      "Replays a clpool trace on the simulated device; returns clpool_replay --json's document "
      "(a str). ValueError for a bad value or an unreadable trace; KeyboardInterrupt on Ctrl-C "
      "(Python's signal handlers run every 16384 events). See clpool.replay.");
  m.def(
      "diff_json",
      [](std::string old_path, std::string new_path, std::vector<std::string> configs,
         std::string granule, std::string profile, std::optional<std::string> semantics,
         std::optional<std::string> host_capacity, std::optional<std::string> max_alloc,
         std::optional<std::string> frees_at, std::optional<std::string> max_growth) {
        const diff_request q{std::move(old_path),      std::move(new_path),  std::move(configs),
                             std::move(granule),       std::move(profile),   std::move(semantics),
                             std::move(host_capacity), std::move(max_alloc), std::move(frees_at),
                             std::move(max_growth)};
        return call_engine([&q] { return run_diff(q); });
      },
      py::arg("old_path"), py::arg("new_path"), py::arg("configs"), py::arg("granule"),
      py::arg("profile"), py::arg("semantics"), py::arg("host_capacity"), py::arg("max_alloc"),
      py::arg("frees_at"), py::arg("max_growth"),
      "Replays two clpool traces on the simulated device as clpool_replay --diff does; returns its "
      "--format json document (a str). ValueError for a bad value or an unreadable trace; "
      "KeyboardInterrupt on Ctrl-C. See clpool.replay.diff.");
}

}  // namespace clpool::python
