// clpool._core's part of the pytest plugin (clpool/pytest_plugin.py): the session's trace, followed
// and cut into one window per test (replay/followed_session.h), and the engine's own rules for what
// the plugin reads from users and writes for them: sizes (common/byte_size.h), profiles and
// capacities (device_model/profile.h), libraries (common/shared_library.h), text a terminal or a
// file system can hold (common/text_escape.h), artifact folders and files (common/output_file.h).
// The plugin defines none of these rules itself.
#include "python/session_binding.h"
#include "python/initialised_caster.h"

#include <pybind11/stl.h>

#include <dlfcn.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/byte_size.h"
#include "common/cl_status.h"
#include "common/output_file.h"
#include "common/shared_library.h"
#include "common/sweep_rules.h"
#include "common/text_escape.h"
#include "device_model/profile.h"
#include "replay/followed_session.h"
#include "trace/trace_reader.h"

namespace py = pybind11;

namespace clpool::python {
namespace {

using replay::followed_session;
using replay::named_usage;

py::list usage_list(const std::vector<named_usage>& list) {
  py::list out;
  for (const named_usage& u : list) out.append(py::make_tuple(u.site, u.bytes, u.blocks));
  return out;
}

replay::figure_options options_of(const std::set<std::uint64_t>& other_threads, std::size_t frames,
                                  std::string until_file, std::string until_function,
                                  std::string root) {
  replay::figure_options o;
  o.other_threads = other_threads;
  o.naming.frames = frames;
  o.naming.until_file = std::move(until_file);
  o.naming.until_function = std::move(until_function);
  o.naming.root = std::move(root);
  o.naming.stop_at_root = true;
  return o;
}

py::dict figures_dict(const replay::window_figures& f) {
  py::dict d;
  d["peak"] = f.peak_bytes;
  d["peak_sites"] = usage_list(f.peak_sites);
  d["left_live"] = f.left_live_bytes;
  d["left_live_blocks"] = f.left_live_blocks;
  d["left_live_sites"] = usage_list(f.left_live_sites);
  d["allocations"] = f.allocations;
  d["other_thread_allocations"] = f.other_thread_allocations;
  d["other_thread_bytes"] = f.other_thread_bytes;
  d["other_thread_sites"] = usage_list(f.other_thread_sites);
  if (f.oom) {
    py::dict o;
    o["where"] = f.oom->where;
    o["requested"] = f.oom->requested_bytes;
    o["site"] = f.oom->site;
    o["recorder_said"] = common::escape_text(f.oom->recorder_said);
    o["live"] = f.oom->live_bytes;
    o["live_blocks"] = f.oom->live_blocks;
    o["live_before"] = f.oom->live_before_bytes;
    o["live_sites"] = usage_list(f.oom->live_sites);
    o["more"] = f.oom->more;
    d["oom"] = o;
  } else {
    d["oom"] = py::none();
  }
  return d;
}

// Text from Python as bytes: a str's surrogate escapes (file names that are not UTF-8) become
// their bytes again.
std::string bytes_of(const py::handle& text) {
  if (PyBytes_Check(text.ptr()))
    return std::string(py::bytes(py::reinterpret_borrow<py::object>(text)));
  py::object encoded = py::reinterpret_steal<py::object>(
      PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogateescape"));
  if (!encoded) throw py::error_already_set();
  return std::string(py::bytes(encoded));
}

// A size as a marker or an option gives it: a str in the one size grammar, or an int of bytes;
// at most the largest device. ValueError saying why, without the value's name (the caller's).
std::uint64_t parse_size(const py::handle& value) {
  std::string why;
  if (PyBool_Check(value.ptr()) || !(PyLong_Check(value.ptr()) || PyUnicode_Check(value.ptr()))) {
    throw py::value_error(py::repr(value).cast<std::string>() +
                          " is not a size: give a string such as '512 MiB' or an int of bytes");
  }
  if (PyLong_Check(value.ptr())) {
    const py::int_ v = py::reinterpret_borrow<py::int_>(value);
    const std::string shown = py::repr(value).cast<std::string>();
    if (v < py::int_(0)) throw py::value_error(shown + " is negative");
    if (v > py::int_(common::max_device_bytes)) {
      throw py::value_error(shown + " is larger than the largest device, 2^62 bytes (4 EiB)");
    }
    return v.cast<std::uint64_t>();
  }
  const std::string text = value.cast<std::string>();
  const std::optional<std::uint64_t> v = common::parse_size(text, {.device = true}, why);
  if (!v) throw py::value_error(py::repr(value).cast<std::string>() + " " + why);
  return *v;
}

// The plugin's followed session beside the layer that writes it: the layer's own controls are
// called natively (dlsym in the copy the ICD loader loaded), since the plugin asks them at every
// test boundary: the seq the next event will get (clpool_layer_next_seq) marks each phase with no
// read of the trace, and clpool_layer_trace_error says when the trace is no longer whole.
class plugin_session {
 public:
  plugin_session(std::string trace_path, const std::optional<std::string>& layer_path)
      : session_(std::move(trace_path)) {
    if (!layer_path) return;
    layer_ = ::dlopen(layer_path->c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (layer_ == nullptr)
      throw py::value_error("the clpool layer " + *layer_path + " is not loaded in this process");
    next_seq_ = reinterpret_cast<next_seq_fn>(::dlsym(layer_, "clpool_layer_next_seq"));
    trace_error_ = reinterpret_cast<trace_error_fn>(::dlsym(layer_, "clpool_layer_trace_error"));
    if (next_seq_ == nullptr || trace_error_ == nullptr) {
      throw py::value_error("the clpool layer " + *layer_path +
                            " does not export clpool_layer_next_seq "
                            "and clpool_layer_trace_error");
    }
  }
  ~plugin_session() {
    if (layer_ != nullptr) ::dlclose(layer_);
  }
  plugin_session(const plugin_session&) = delete;
  plugin_session& operator=(const plugin_session&) = delete;

  // "" while the trace is whole and read; else why not (the layer's words, or the reader's).
  std::string sync() {
    if (trace_error_ != nullptr) {
      if (const unsigned long long n = trace_error_(nullptr, 0); n != 0) {
        std::string why(n + 1, '\0');
        trace_error_(why.data(), why.size());
        why.resize(n);
        return common::escape_text(why);
      }
    }
    try {
      session_.sync();
    } catch (const trace::trace_error& e) {
      return common::escape_text(std::string("the session's trace could not be read: ") + e.what());
    }
    return "";
  }
  std::optional<std::uint64_t> now() const {
    return next_seq_ != nullptr ? std::optional<std::uint64_t>(next_seq_()) : std::nullopt;
  }
  followed_session& session() { return session_; }

 private:
  using next_seq_fn = unsigned long long (*)();
  using trace_error_fn = unsigned long long (*)(char*, unsigned long long);
  followed_session session_;
  void* layer_ = nullptr;
  next_seq_fn next_seq_ = nullptr;
  trace_error_fn trace_error_ = nullptr;
};

}  // namespace
}  // namespace clpool::python

CLPOOL_REFUSE_UNINITIALISED(clpool::python::plugin_session);

namespace clpool::python {
namespace {

void bind_followed_session(py::module_& m) {
  py::class_<plugin_session>(m, "_FollowedSession",
                             "The layer's trace of this process, followed as it is written and cut "
                             "into one window per test (replay/followed_session.h).")
      .def(py::init<std::string, std::optional<std::string>>(), py::arg("trace_path"),
           py::arg("layer_path"))
      .def("sync", &plugin_session::sync,
           "Reads what the layer added: '' while the trace is whole, else why it is not.")
      .def("begin_window", [](plugin_session& p) { p.session().begin_window(p.now()); })
      .def("mark_call", [](plugin_session& p) { p.session().mark_call(p.now()); })
      .def("mark_call_end", [](plugin_session& p) { p.session().mark_call_end(p.now()); })
      .def("end_window", [](plugin_session& p) { p.session().end_window(); })
      .def_property_readonly("in_window", [](plugin_session& p) { return p.session().in_window(); })
      .def_property_readonly("window_entries",
                             [](plugin_session& p) { return p.session().window_entries(); })
      .def_property_readonly("allocations",
                             [](plugin_session& p) { return p.session().allocations(); })
      .def_property_readonly("events", [](plugin_session& p) { return p.session().events(); })
      .def(
          "figures",
          [](plugin_session& p, const std::set<std::uint64_t>& other_threads, std::size_t frames,
             std::string until_file, std::string until_function, std::string root) {
            return figures_dict(
                p.session().figures(options_of(other_threads, frames, std::move(until_file),
                                               std::move(until_function), std::move(root))));
          },
          py::arg("other_threads"), py::arg("frames"), py::arg("until_file"),
          py::arg("until_function"), py::arg("root"),
          "The open window's figures (a dict; sizes in bytes, sites as (name, bytes, blocks)).")
      .def(
          "write_window_trace",
          [](plugin_session& p, const std::string& path, const py::handle& test, bool device,
             const std::set<std::uint64_t>& other_threads) {
            try {
              p.session().write_window_trace(
                  path, bytes_of(test),
                  device ? replay::window_trace::device : replay::window_trace::own, other_threads);
            } catch (const std::exception& e) {  // common::output_error, the writer's errors
              throw py::value_error(common::escape_text(e.what()));
            }
          },
          py::arg("path"), py::arg("test"), py::arg("device"), py::arg("other_threads"),
          "Writes the open window as a trace (device: with what was live before it, every "
          "thread's); ValueError naming the file when it cannot be written.");
}

void bind_rules(py::module_& m) {
  m.def("parse_size", &parse_size, py::arg("value"),
        "A size (common/byte_size.h): a str such as '512 MiB' or an int of bytes, at most 2^62.");
  m.attr("MAX_DEVICE_BYTES") = common::max_device_bytes;
  m.def("format_bytes", &common::format_bytes, py::arg("bytes"), "'1.50 MiB', '4 GiB', '123 B'.");
  m.def("format_bytes_both", &common::format_bytes_both, py::arg("bytes"),
        "'1.50 MiB (1572864 bytes)', '123 bytes'.");
  m.def(
      "escape_text", [](const py::handle& text) { return common::escape_text(bytes_of(text)); },
      py::arg("text"), "Text a terminal can show as it is (common/text_escape.h).");
  m.def(
      "file_name_for", [](const py::handle& text) { return common::file_name_for(bytes_of(text)); },
      py::arg("text"),
      "One file name for any text, distinct for distinct texts (common/text_escape.h).");
}

// The out-of-memory sweep's rules, as clpool sweep applies them (common/sweep_rules.h).
void bind_sweep_rules(py::module_& m) {
  m.def(
      "parse_sweep_point",
      [](const std::string& text) -> std::optional<std::pair<std::string, std::uint64_t>> {
        const std::optional<common::sweep_point> p = common::parse_sweep_point(text);
        if (!p) return std::nullopt;
        return std::pair<std::string, std::uint64_t>(p->first_use ? "first-use" : "alloc", p->n);
      },
      py::arg("text"),
      "('alloc', 7) for 'alloc:7', ('first-use', 3) for 'first-use:3'; else None.");
  m.def(
      "out_of_memory_status_names",
      [] {
        // Every status the one rule (common/cl_status.h) calls an out-of-memory, by name.
        std::vector<std::string> names;
        for (std::int32_t status = 0; status >= -1200; --status) {
          if (common::is_out_of_memory_status(status)) names.push_back(common::status_name(status));
        }
        return names;
      },
      "The names of the statuses that mean the device ran out of memory: "
      "['CL_MEM_OBJECT_ALLOCATION_FAILURE', ...].");
  m.def("signal_text", &common::signal_text, py::arg("signal"),
        "'signal 11 (SIGSEGV)'; 'signal 40' for one with no name (a real-time signal).");
  m.def("sweep_timeout_problem", &common::sweep_timeout_problem, py::arg("seconds"),
        "'' when `seconds` is a timeout (above 0, at most a week), else why not "
        "('is more than a week (604800 s)').");
  m.def("sweep_fault_free_limit", &common::fault_free_limit, py::arg("timeout"),
        "How long the fault-free run may take: ten times the timeout, at least 60 s; None "
        "(no limit) without a timeout.");
  m.def("sweep_run_timeout", &common::sweep_run_timeout, py::arg("timeout"),
        py::arg("fault_free_seconds"),
        "A run's timeout: the one given, else ten times the fault-free run, at least 10 s.");
}

// Device profiles, by name or file (device_model/profile.h).
void bind_profiles(py::module_& m) {
  m.def(
      "load_profile",
      [](const std::string& name_or_path) {
        try {
          const device_model::device_profile p = device_model::load_profile(name_or_path);
          py::dict d;
          d["name"] = common::escape_text(p.name);
          d["headroom"] = p.headroom;
          d["oom_at"] = std::string(device_model::to_string(p.oom_at));
          d["is_file"] = device_model::names_profile_file(name_or_path);
          return d;
        } catch (const device_model::profile_error& e) {
          throw py::value_error(common::escape_text(e.what()));
        }
      },
      py::arg("name_or_path"),
      "A device profile by name or path (a dict); ValueError saying why not.");
  m.def(
      "capacity_refusal",
      [](const std::string& profile, std::uint64_t capacity, const std::string& what) {
        try {
          return device_model::capacity_refusal(device_model::load_profile(profile), capacity,
                                                what);
        } catch (const device_model::profile_error& e) {
          return common::escape_text(e.what());
        }
      },
      py::arg("profile"), py::arg("capacity"), py::arg("what"),
      "'' when a device of `capacity` can have the profile, else why not.");
  m.def("builtin_profiles", &device_model::builtin_profile_names);
}

// The checks and writes the plugin makes on files (common/shared_library.h, output_file.h).
void bind_files(py::module_& m) {
  m.def(
      "library_refusal",
      [](const std::string& path, const std::vector<std::string>& exports) {
        std::string why = common::shared_library_refusal(path, exports);
        if (why.empty()) why = common::trial_load_refusal(path, exports);
        return why;
      },
      py::arg("path"), py::arg("exports"),
      "'' when `path` is a shared library this process can load and that defines `exports`, else "
      "why not (ELF checks, then a trial load in a child process).");
  m.def(
      "write_output_file",
      [](const std::string& path, const py::bytes& data, const std::string& what) {
        try {
          common::atomic_output_file f(path, what, {.refuse_links = true, .regular_only = true});
          f.stream() << std::string(data);
          f.commit();
        } catch (const common::output_error& e) {
          throw py::value_error(common::escape_text(e.what()));
        }
      },
      py::arg("path"), py::arg("data"), py::arg("what"),
      "Writes `data` to `path` whole or not at all (a temporary file renamed over it), refusing a "
      "symbolic link or anything but a regular file there; ValueError naming the file and why.");
  m.def(
      "make_output_directory",
      [](const std::string& path, const std::string& what) {
        try {
          common::make_output_directory(path, what);
        } catch (const common::output_error& e) {
          throw py::value_error(common::escape_text(e.what()));
        }
      },
      py::arg("path"), py::arg("what"),
      "Makes the directory (its parent must exist) or takes the one there; ValueError for a file "
      "or a symbolic link there, or what mkdir refuses.");
}

}  // namespace

void bind_session(py::module_& m) {
  bind_followed_session(m);
  bind_sweep_rules(m);
  bind_rules(m);
  bind_profiles(m);
  bind_files(m);
}

}  // namespace clpool::python
